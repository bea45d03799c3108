#include "orchestrator/silence_watch.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/config_values.h"

namespace apollo::orchestrator {

SilenceWatch::SilenceWatch(Duration limit, std::function<void(const std::string&)> log)
    : limit_(limit), log_(std::move(log)), shortest_(limit) {}

namespace {

Duration TickFor(Duration shortest) {
  return std::clamp<Duration>(shortest / 8, std::chrono::milliseconds(50),
                              std::chrono::seconds(30));
}

}  // namespace

SilenceWatch::~SilenceWatch() { Stop(); }

void SilenceWatch::Start() {
  if (limit_.count() <= 0) return;
  thread_ = std::thread([this] { Loop(); });
}

void SilenceWatch::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SilenceWatch::Add(SilentPeer* peer, Duration own) {
  if (limit_.count() <= 0) return;
  Duration limit = std::max(limit_, own);
  {
    std::lock_guard<std::mutex> lock(mu_);
    peers_[peer] = limit;
    if (limit >= shortest_) return;
    shortest_ = limit;
  }
  cv_.notify_all();  // the sweeper waits for a shorter tick now
}

void SilenceWatch::Extend(SilentPeer* peer, Duration own) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = peers_.find(peer);
  if (it != peers_.end()) it->second = std::max(it->second, own);
}

void SilenceWatch::Remove(SilentPeer* peer) {
  std::lock_guard<std::mutex> lock(mu_);
  peers_.erase(peer);
}

int SilenceWatch::Expire(std::chrono::steady_clock::time_point now) {
  int n = 0;
  Duration longest{0};
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<SilentPeer*, Duration>> silent;  // -> how long
    std::optional<Duration> shortest;                      // of the peers that stay
    for (const auto& [p, limit] : peers_) {
      auto heard = p->LastHeard();
      if (!heard || now - *heard <= limit) {
        if (!shortest || limit < *shortest) shortest = limit;
        continue;
      }
      silent.emplace_back(p, std::chrono::duration_cast<Duration>(now - *heard));
    }
    shortest_ = shortest.value_or(limit_);
    for (auto& [p, d] : silent) {
      peers_.erase(p);
      // Under mu_: the stream cannot finish and free itself meanwhile (its
      // OnDone calls Remove first).
      p->SilenceTimedOut(d);
      longest = std::max(longest, d);
      ++n;
    }
    expired_ += n;
  }
  if (n > 0 && log_) {
    log_("closed " + std::to_string(n) + " agent stream(s) silent for 2.5 heartbeat intervals (" +
         FormatDuration(limit_) + " or more; the longest silent for " +
         FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(longest)) +
         "): link cut or agent stuck; they reconnect when they can");
  }
  return n;
}

size_t SilenceWatch::watched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peers_.size();
}

int64_t SilenceWatch::expired_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return expired_;
}

Duration SilenceWatch::tick() const {
  std::lock_guard<std::mutex> lock(mu_);
  return TickFor(shortest_);
}

void SilenceWatch::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const Duration basis = shortest_;
    // Woken early by a peer with a shorter limit (Add): wait again, for its
    // tick. It cannot have been silent for its limit yet.
    if (cv_.wait_for(lock, TickFor(basis), [&] { return stop_ || shortest_ < basis; })) {
      if (stop_) return;
      continue;
    }
    lock.unlock();
    Expire(std::chrono::steady_clock::now());
    lock.lock();
  }
}

}  // namespace apollo::orchestrator
