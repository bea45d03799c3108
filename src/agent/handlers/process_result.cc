#include "agent/handlers/process_result.h"

#include <cstring>

#include "agent/handlers/params.h"

namespace apollo::agent {

std::map<std::string, std::string> HandlerProcessEnv(
    const HandlerContext& ctx, const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> env = extra;
  for (const auto& [k, v] : ctx.ApolloEnv()) env[k] = v;
  return env;
}

nlohmann::json ChildDetail(const ChildOutcome& child) {
  nlohmann::json d = {
      {"exit_code", child.exited ? child.exit_code : 128 + child.term_signal},
      {"stdout_tail", ToValidUtf8(child.stdout_tail)},
      {"stderr_tail", ToValidUtf8(child.stderr_tail)},
  };
  if (!child.exited) d["signal"] = child.term_signal;
  if (child.stdout_truncated) d["stdout_truncated"] = true;
  if (child.stderr_truncated) d["stderr_truncated"] = true;
  if (child.killed) d["killed"] = true;
  if (child.group_left_behind) d["group_left_behind"] = true;
  return d;
}

std::string DescribeExit(const ChildOutcome& child) {
  if (child.exited) return "exited with code " + std::to_string(child.exit_code);
  // sigdescr_np, unlike strsignal, is thread-safe.
  const char* name = sigdescr_np(child.term_signal);
  return "killed by signal " + std::to_string(child.term_signal) + " (" +
         (name != nullptr ? name : "unknown") + ")";
}

std::string LastLine(std::string_view text, size_t max) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  size_t nl = text.rfind('\n');
  if (nl != std::string_view::npos) text.remove_prefix(nl + 1);
  if (text.size() > max) text = text.substr(0, max);
  return ToValidUtf8(text);
}

}  // namespace apollo::agent
