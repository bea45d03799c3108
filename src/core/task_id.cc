#include "core/task_id.h"

#include <algorithm>

namespace apollo {
namespace {

constexpr std::string_view kBase32 = "0123456789abcdefghjkmnpqrstvwxyz";  // Crockford, lower

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '-';
}

std::mt19937_64 SeededFrom(std::array<uint64_t, 4> seed) {
  std::seed_seq seq{static_cast<uint32_t>(seed[0]), static_cast<uint32_t>(seed[0] >> 32),
                    static_cast<uint32_t>(seed[1]), static_cast<uint32_t>(seed[1] >> 32),
                    static_cast<uint32_t>(seed[2]), static_cast<uint32_t>(seed[2] >> 32),
                    static_cast<uint32_t>(seed[3]), static_cast<uint32_t>(seed[3] >> 32)};
  return std::mt19937_64(seq);
}

std::array<uint64_t, 4> OsSeed() {
  std::random_device rd;  // getrandom(2) on Linux/glibc
  std::array<uint64_t, 4> s{};
  for (auto& v : s) v = (static_cast<uint64_t>(rd()) << 32) | rd();
  return s;
}

}  // namespace

std::string TaskIdProblem(std::string_view id) {
  if (id.empty()) return "task_id is empty";
  if (id.size() > kMaxTaskIdLength) {
    return "task_id is " + std::to_string(id.size()) + " characters long; at most " +
           std::to_string(kMaxTaskIdLength) + " are allowed";
  }
  for (size_t i = 0; i < id.size(); ++i) {
    if (!IsIdChar(id[i])) {
      return "task_id has a character that is not allowed at position " + std::to_string(i + 1) +
             " (allowed: letters, digits, '.', '_', '-')";
    }
  }
  return {};
}

TaskIdGenerator::TaskIdGenerator(const Clock& clock) : TaskIdGenerator(clock, OsSeed()) {}

TaskIdGenerator::TaskIdGenerator(const Clock& clock, std::array<uint64_t, 4> seed)
    : clock_(clock), rng_(SeededFrom(seed)) {}

std::string TaskIdGenerator::Generate(std::string_view domain) {
  std::string d;
  for (char c : domain) d.push_back(IsIdChar(c) ? (c == '_' ? '-' : c) : '-');
  if (d.empty()) d = "task";
  std::string secs = std::to_string(ToUnixSeconds(clock_.Now()));
  const size_t fixed = 1 + secs.size() + 1 + kTaskIdRandomChars;
  if (d.size() + fixed > kMaxTaskIdLength) d.resize(kMaxTaskIdLength - fixed);

  uint64_t hi, lo;
  {
    std::lock_guard<std::mutex> lock(mu_);
    hi = rng_();
    lo = rng_();
  }
  // 80 random bits as 16 base32 digits: 60 bits of lo, then 20 of hi.
  std::string rnd(kTaskIdRandomChars, '0');
  for (size_t i = 0; i < kTaskIdRandomChars; ++i) {
    uint64_t bits = i < 12 ? (lo >> (5 * i)) : (hi >> (5 * (i - 12)));
    rnd[i] = kBase32[bits & 31];
  }
  return d + "-" + secs + "-" + rnd;
}

}  // namespace apollo
