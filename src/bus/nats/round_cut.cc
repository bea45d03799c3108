#include "bus/nats/round_cut.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

namespace apollo::bus::nats {

std::string FormatRoundTag(std::string_view round_id, size_t parts) {
  return std::string(round_id) + "/" + std::to_string(parts);
}

std::optional<RoundTag> ParseRoundTag(const char* value) {
  if (!value) return std::nullopt;
  std::string_view v(value);
  size_t slash = v.rfind('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == v.size()) return std::nullopt;
  char* end = nullptr;
  std::string count(v.substr(slash + 1));
  unsigned long long n = std::strtoull(count.c_str(), &end, 10);
  if (*end != '\0' || n == 0) return std::nullopt;
  return RoundTag{std::string(v.substr(0, slash)), static_cast<size_t>(n)};
}

Cut CutAtWholeRounds(const std::vector<std::vector<Waiting>>& waiting, Instant now,
                     Duration max_wait) {
  struct Seen {
    size_t present = 0;
    size_t parts = 1;
    Instant first{};
  };
  std::unordered_map<std::string_view, Seen> rounds;
  for (const auto& q : waiting) {
    for (const Waiting& w : q) {
      if (w.round.empty()) continue;
      auto [it, fresh] = rounds.try_emplace(w.round, Seen{0, w.parts, w.handed});
      ++it->second.present;
      it->second.first = std::min(it->second.first, w.handed);
    }
  }
  Cut cut;
  std::unordered_set<std::string_view> held;
  for (const auto& [id, s] : rounds) {
    if (s.present >= s.parts) continue;
    Instant expires = s.first + max_wait;
    if (now >= expires) {
      ++cut.expired;
      continue;
    }
    held.insert(id);
    if (!cut.recheck || expires < *cut.recheck) cut.recheck = expires;
  }
  cut.take.resize(waiting.size());
  // Hold everything behind a held message, and every round with a part so
  // held, until nothing changes (each pass only adds rounds).
  for (;;) {
    size_t before = held.size();
    for (size_t p = 0; p < waiting.size(); ++p) {
      const auto& q = waiting[p];
      size_t k = 0;
      while (k < q.size() && (q[k].round.empty() || !held.count(q[k].round))) ++k;
      cut.take[p] = k;
      for (size_t j = k; j < q.size(); ++j) {
        if (!q[j].round.empty()) held.insert(q[j].round);
      }
    }
    if (held.size() == before) break;
  }
  return cut;
}

}  // namespace apollo::bus::nats
