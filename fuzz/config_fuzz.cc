// Fuzzes the two daemons' YAML config readers: byte 0 picks the reader
// (even: orchestrator.yaml's, ParseOrchestratorConfig; odd: edge-agent.yaml's,
// ParseAgentConfig), the rest is the file. Any bytes in, a config or
// diagnostics out: never a crash, an exception, a hang or unbounded memory.
//
// Invariants, aborting when broken:
//  - every diagnostic reads "<file>:<line>:<column>: <message>", with line
//    and column from 1 (or both 0: the file as a whole), the line within
//    the file, and a message of one printable line (no control characters);
//  - diagnostics come in file order (line, then column);
//  - parsing is a pure function: twice the same text, the same result.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "agent/agent_config.h"
#include "core/task_spec.h"
#include "orchestrator/orchestrator_config.h"

namespace {

constexpr char kFile[] = "fuzz.yaml";

[[noreturn]] void Violated(const std::string& what, const apollo::Diagnostic* d = nullptr) {
  std::fprintf(stderr, "config_fuzz: invariant broken: %s%s%s\n", what.c_str(), d ? ": " : "",
               d ? d->ToString().c_str() : "");
  std::abort();
}

// Lines as YAML counts them: "\n", "\r\n" and a lone "\r" each end one.
int LineCount(std::string_view text) {
  int lines = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) {
      ++lines;
    }
  }
  return lines;
}

void CheckDiagnostics(const std::vector<apollo::Diagnostic>& errors, std::string_view text) {
  const int lines = LineCount(text);
  const apollo::Diagnostic* prev = nullptr;
  for (const auto& d : errors) {
    if (d.file != kFile) Violated("diagnostic names another file", &d);
    const bool whole_file = d.line == 0 && d.column == 0;
    if (!whole_file && (d.line < 1 || d.column < 1)) Violated("no line:column", &d);
    if (d.line > lines) Violated("line past the end of the file", &d);
    if (d.message.empty()) Violated("empty message", &d);
    for (char c : d.message) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        Violated("a control character in the message (not one printable line)", &d);
      }
    }
    const std::string shape = std::string(kFile) + ":" + std::to_string(d.line) + ":" +
                              std::to_string(d.column) + ": " + d.message;
    if (d.ToString() != shape) Violated("not file:line:column: message", &d);
    if (prev && (prev->line > d.line || (prev->line == d.line && prev->column > d.column))) {
      Violated("diagnostics out of file order", &d);
    }
    prev = &d;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto parsed = apollo::orchestrator::ParseOrchestratorConfig(text, kFile);
    CheckDiagnostics(parsed.errors, text);
    auto again = apollo::orchestrator::ParseOrchestratorConfig(text, kFile);
    if (again.errors != parsed.errors || !(again.config == parsed.config)) {
      Violated("orchestrator config: two parses differ");
    }
  } else {
    auto parsed = apollo::agent::ParseAgentConfig(text, kFile, /*cores=*/4);
    CheckDiagnostics(parsed.errors, text);
    auto again = apollo::agent::ParseAgentConfig(text, kFile, /*cores=*/4);
    if (again.errors != parsed.errors || !(again.config == parsed.config)) {
      Violated("agent config: two parses differ");
    }
  }
  return 0;
}
