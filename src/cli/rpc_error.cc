#include "cli/rpc_error.h"

#include <cstdio>

namespace apollo::cli {

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  return out;
}

std::string ServersPhrase(const std::vector<std::string>& servers) {
  if (servers.size() == 1) return servers.front();
  std::string out;
  for (const std::string& s : servers) out += (out.empty() ? "any of " : ", ") + s;
  return out;
}

namespace {

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

Status DescribeRpcError(const grpc::Status& s, const RpcCallInfo& info) {
  auto code = static_cast<StatusCode>(s.error_code());
  std::string msg = OneLine(s.error_message());
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      return {code, "cannot reach the orchestrator at " + info.server + ": " + msg};
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      if (!info.channel_was_ready) {
        return {code, "cannot reach the orchestrator at " + info.server + ": " + msg};
      }
      return {code, "the orchestrator at " + info.server + " did not answer within " +
                        Seconds(info.timeout_s) + "s"};
    case grpc::StatusCode::NOT_FOUND:
      if (!info.task_id.empty()) return {code, "no task '" + OneLine(info.task_id) + "'"};
      break;
    case grpc::StatusCode::UNIMPLEMENTED:
      return {code, "the orchestrator at " + info.server +
                        " does not support this request: " + (msg.empty() ? "UNIMPLEMENTED" : msg)};
    default:
      break;
  }
  if (msg.empty()) msg = "the orchestrator answered " + std::string(StatusCodeName(code));
  return {code, msg};
}

}  // namespace apollo::cli
