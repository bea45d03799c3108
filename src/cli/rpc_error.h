#pragma once

// Turning a failed gRPC call into the one line an operator reads after
// "apollo-cli: ". Pure: the caller supplies what it knows about the call.

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace apollo::cli {

struct RpcCallInfo {
  // The address dialled, e.g. "127.0.0.1:7011"; when several replicas were
  // tried and none could be reached, ServersPhrase of them all.
  std::string server;
  std::string task_id;             // the task the call was about; empty if none
  bool channel_was_ready = false;  // the channel had connected when the call failed
  double timeout_s = 0;            // the deadline the call had, for the message
};

// A Status with the same code as `s` (gRPC's codes are ours one for one) and
// a single-line message:
//   UNAVAILABLE, or DEADLINE_EXCEEDED before a connection was made
//                      -> "cannot reach the orchestrator at S: <grpc message>"
//   DEADLINE_EXCEEDED  -> "the orchestrator at S did not answer within Ns"
//   NOT_FOUND + task   -> "no task 'ID'"
//   UNIMPLEMENTED      -> "the orchestrator at S does not support this request: ..."
//   anything else      -> the server's message (or the code's name if empty)
// Precondition: !s.ok().
Status DescribeRpcError(const grpc::Status& s, const RpcCallInfo& info);

// How messages name the orchestrator addresses a call tried: the address
// itself for one, "any of a:7011, b:7011, c:7011" for several (so "cannot
// reach the orchestrator at any of a, b, c: <last error>").
std::string ServersPhrase(const std::vector<std::string>& servers);

// `text` with every control character (newlines included) replaced by a
// space, so a server-supplied string can never break a line or a table, nor
// send escape sequences to the terminal.
std::string OneLine(std::string_view text);

}  // namespace apollo::cli
