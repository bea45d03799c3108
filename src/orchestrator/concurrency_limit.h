#pragma once

// A cap on how many of something are open at once (agent streams, WatchTask
// watchers): TryAcquire hands out a Lease while fewer than `capacity` are
// held, and refuses (never waits) otherwise; the Lease gives its slot back
// when it is destroyed. A refused caller answers RESOURCE_EXHAUSTED.
//
// Lifetime: the ConcurrencyLimit must outlive its leases.
// Thread-safety: thread-safe; a Lease is owned by one holder at a time.

#include <atomic>
#include <cstdint>
#include <optional>

namespace apollo::orchestrator {

class ConcurrencyLimit {
 public:
  class Lease {
   public:
    Lease(Lease&& other) noexcept : limit_(other.limit_) { other.limit_ = nullptr; }
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

   private:
    friend class ConcurrencyLimit;
    explicit Lease(ConcurrencyLimit* limit) : limit_(limit) {}
    void Release();
    ConcurrencyLimit* limit_;  // null once released or moved from
  };

  explicit ConcurrencyLimit(int64_t capacity) : capacity_(capacity) {}

  // A slot, or nullopt when `capacity` are held.
  std::optional<Lease> TryAcquire();
  int64_t in_use() const { return in_use_.load(); }
  int64_t capacity() const { return capacity_; }
  // How many TryAcquire calls were refused so far.
  int64_t refused() const { return refused_.load(); }

 private:
  const int64_t capacity_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> refused_{0};
};

}  // namespace apollo::orchestrator
