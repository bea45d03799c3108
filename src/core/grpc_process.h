#pragma once

// Process-wide settings of the gRPC runtime, applied once at the start of
// main() by every binary that serves or simulates agents (orchestrator,
// edge-agent, apollo-bench).
//
// Today one: absl's mutex deadlock detector off. Debian builds absl without
// NDEBUG, so every absl::Mutex lock inside gRPC also updates a process-wide
// lock graph under one global mutex (absl's GraphCycles). Upstream gRPC
// release builds have it compiled out. It checks gRPC's own lock order, not
// ours (our code uses std::mutex), and at 10,000 agent connections it was
// 9 % of an idle center's CPU (BENCHMARKS.md, issue 18).

namespace apollo {

void ApplyGrpcProcessSettings();

}  // namespace apollo
