#pragma once

// OrchestratorConfig -> the options of each component the orchestrator
// binary starts (the brain, the store, the bus, the notifiers, retention).
// One place maps every configuration key to what it drives, so a test can
// prove that each documented key has an effect (runtime_options_test.cc):
// change a key, and Fingerprint() of the derived options changes.
//
// Thread-safety: values and pure functions.

#include <string>

#include "bus/event_bus.h"
#include "orchestrator/alert_notifier.h"
#include "orchestrator/callback_notifier.h"
#include "orchestrator/gateway_service.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/orchestrator_config.h"
#include "orchestrator/retention_runner.h"
#include "store/open_store.h"

namespace apollo::orchestrator {

struct RuntimeOptions {
  HostPort listen;
  std::string store_url;
  std::string bus_url;
  tls::TlsPaths tls;
  bool insecure = false;
  std::string log_format;            // text | json
  bool acl = false;                  // operator tokens required (access_control.h)
  HttpConfig http;                   // the HTTP server (src/orchestrator/http/)
  OrchestratorOptions orchestrator;  // `alert` left empty: main wires it
  GatewayOptions gateway;            // `log` left empty: main wires it
  store::StoreOptions store;
  bus::BusOptions bus;  // `on_alert` left empty: main wires it
  CallbackOptions callbacks;
  AlertNotifierOptions alerts;
  RetentionRunnerOptions retention;  // `log` left empty
};

RuntimeOptions DeriveRuntimeOptions(const OrchestratorConfig& config);

// Every value of `o` as "name=value" lines (callbacks excluded): two
// configurations drive the same behaviour iff their fingerprints are equal.
std::string Fingerprint(const RuntimeOptions& o);

}  // namespace apollo::orchestrator
