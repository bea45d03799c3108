#pragma once

// AgentConfig -> the options of each part bin/edge-agent starts (the WAL,
// the handler registry, the session, the executor). One place maps every
// configuration key to what it drives, so a test proves each key of
// config/edge-agent.yaml has an effect (runtime_options_test.cc).
//
// Thread-safety: values and pure functions.

#include <string>

#include "agent/agent_config.h"
#include "agent/executor.h"
#include "agent/handlers/registry.h"
#include "agent/session.h"
#include "agent/wal/wal.h"

namespace apollo::agent {

struct AgentRuntimeOptions {
  std::string state_dir;
  std::string wal_path;
  tls::TlsPaths tls;  // loaded by main (files)
  wal::WalOptions wal;
  HandlerConfig handlers;
  // Without what main fills in at start: tls material, the registry's
  // intents, the version, the log.
  SessionOptions session;
  ExecutorOptions executor;
  std::optional<HostPort> metrics_listen;  // the /metrics endpoint; unset: off
  std::string log_format;                  // text | json
};

AgentRuntimeOptions DeriveAgentRuntimeOptions(const AgentConfig& config);

// Every value as "name=value" lines (callbacks excluded): two
// configurations drive the same agent iff their fingerprints are equal.
std::string Fingerprint(const AgentRuntimeOptions& o);

}  // namespace apollo::agent
