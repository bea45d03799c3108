#pragma once

// task_id generation and syntax.
//
// A generated id is "<domain>-<unix seconds>-<random>", e.g.
// "collect-metrics-1712345678-k3v9q2xw7m1c4d8h". The random part is 16
// characters of Crockford base32 (80 bits) from a generator seeded with
// 256 bits from the OS's CSPRNG, so ids never collide in practice: ten
// million ids in one second in one process collide with probability ~4e-11.
//
// Thread-safety: TaskIdGenerator is safe to call from several threads.

#include <array>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace apollo {

inline constexpr size_t kMaxTaskIdLength = 128;
inline constexpr size_t kTaskIdRandomChars = 16;

// Empty when `id` is a valid task_id: 1..128 characters of letters, digits,
// '.', '_' and '-'. Otherwise the reason, for an error message.
std::string TaskIdProblem(std::string_view id);

class TaskIdGenerator {
 public:
  // Seeds from the OS CSPRNG (getrandom via std::random_device).
  explicit TaskIdGenerator(const Clock& clock);
  // Deterministic, for tests.
  TaskIdGenerator(const Clock& clock, std::array<uint64_t, 4> seed);

  // A new id for `domain` (e.g. the intent with '_' turned into '-').
  // The domain is sanitised to the allowed characters and shortened so the
  // whole id stays within kMaxTaskIdLength.
  std::string Generate(std::string_view domain);

 private:
  const Clock& clock_;
  std::mutex mu_;
  std::mt19937_64 rng_;  // guarded by mu_
};

}  // namespace apollo
