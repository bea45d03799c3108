// Fuzzes the task-file parser: any bytes in, diagnostics or specs out, never
// a crash, an exception, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/task_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  apollo::ParsedTasks parsed = apollo::ParseTaskFile(text, "fuzz.yaml");
  // Invariants worth checking on every input.
  if (parsed.ok() == parsed.errors.size() > 0) __builtin_trap();
  for (const auto& spec : parsed.tasks) {
    // A valid spec survives its canonical JSON round trip unchanged.
    auto back = apollo::SpecFromJson(apollo::SpecToJson(spec));
    if (!back.ok()) __builtin_trap();
    if (apollo::CanonicalSpec(*back) != apollo::CanonicalSpec(spec)) __builtin_trap();
  }
  for (const auto& d : parsed.errors) {
    if (d.line < 1 || d.column < 1 || d.message.empty()) __builtin_trap();
    for (char c : d.message) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) __builtin_trap();  // one line
    }
  }
  return 0;
}
