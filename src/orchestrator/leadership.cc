#include "orchestrator/leadership.h"

#include <sstream>

namespace apollo::orchestrator {
namespace {

std::string Seconds(Duration d) {
  std::ostringstream out;
  out.precision(2);
  out << std::chrono::duration<double>(d).count() << " s";
  return out.str();
}

}  // namespace

Leadership::Leadership(LeadershipOptions options, store::StateStore& store, const Clock& clock)
    : options_(std::move(options)), store_(store), clock_(clock), started_(clock.Now()) {}

Leadership::~Leadership() { Stop(); }

void Leadership::Start(std::string replica_id, std::string address) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    replica_id_ = std::move(replica_id);
    address_ = std::move(address);
    if (options_.single) {
      leader_id_ = replica_id_;
      leader_address_ = address_;
    }
  }
  if (options_.single) {
    leader_ = true;
    if (options_.on_elected) options_.on_elected(0);
    return;
  }
  if (!ClaimOnce()) return;
  thread_ = std::thread([this] { Loop(); });
}

void Leadership::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (options_.single || !leader_.exchange(false)) return;
  int64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    epoch = epoch_;
  }
  Status s = store_.ReleaseLease(store::kLeaderLease, replica_id(), epoch);
  Log(s.ok() ? "released the leader lease (epoch " + std::to_string(epoch) +
                   "): another replica takes over now"
             : "could not release the leader lease: " + s.message() +
                   " (another replica takes over when it expires)");
}

std::optional<store::Fence> Leadership::fence() const {
  if (options_.single) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  if (!leader_.load()) return std::nullopt;
  return store::Fence{store::kLeaderLease, replica_id_, epoch_};
}

std::string Leadership::leader_address() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leader_address_;
}

std::string Leadership::replica_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replica_id_;
}

std::string Leadership::leader_id() const {
  std::lock_guard<std::mutex> lock(mu_);
  return leader_id_;
}

void Leadership::Loop() {
  const Duration every = options_.ttl / 3;
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, every, [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    const bool go_on = ClaimOnce();
    lock.lock();
    if (!go_on) break;
  }
}

bool Leadership::ClaimOnce() {
  store::LeaseClaim claim;
  claim.ttl = options_.ttl;
  claim.started_at = started_;
  const TimePoint asked = clock_.Now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    claim.replica_id = replica_id_;
    claim.address = address_;
    claim.epoch = epoch_;
  }
  Result<store::LeaseRow> row = store_.ClaimLease(claim);
  if (!row.ok()) {
    std::string why;
    bool deposed = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (row.status().message() != last_error_) {
        last_error_ = row.status().message();
        why = last_error_;
      }
      // Held, and not renewed in time by this replica's own clock: others
      // may take it from now on, so stop acting as the leader.
      deposed = leader_.load() && clock_.Now() >= held_until_;
    }
    if (!why.empty()) Log("cannot claim the leader lease: " + why);
    if (deposed) {
      leader_ = false;
      if (options_.on_deposed) {
        options_.on_deposed("the leader lease ran out while the store was unreachable (" +
                            row.status().message() + ")");
      }
      return false;
    }
    return true;
  }
  bool elected = false;
  bool deposed = false;
  int64_t held_epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_error_.clear();
    const bool was_leader = leader_.load();
    const bool mine = row->holder == replica_id_;
    leader_id_ = row->holder;
    leader_address_ = row->address;
    if (mine && was_leader && row->epoch != epoch_) {
      // Lost and taken back: someone else led in between (this replica was
      // paused past its lease, and its successor's lapsed too). What it
      // remembers from before may be stale: deposed all the same.
      deposed = true;
      held_epoch = epoch_;
      leader_ = false;
    } else if (mine) {
      elected = !was_leader;
      held_epoch = epoch_ = row->epoch;
      // Counted from before the claim was sent: the store's expiry is later.
      held_until_ = asked + options_.ttl;
      leader_ = true;
    } else if (was_leader) {
      deposed = true;
      held_epoch = epoch_;
      leader_ = false;
    }
  }
  if (elected) {
    Log("leading: took the leader lease at epoch " + std::to_string(held_epoch) + " (ttl " +
        Seconds(options_.ttl) + ", renewed every " + Seconds(options_.ttl / 3) + ")");
    if (options_.on_elected) options_.on_elected(held_epoch);
  }
  if (deposed) {
    const std::string why =
        "the leader lease (epoch " + std::to_string(held_epoch) + ") was taken by " +
        (row->holder == replica_id() ? std::string("another replica, then by this one again")
                                     : row->holder) +
        " at epoch " + std::to_string(row->epoch) +
        " (this replica did not renew it in time: paused, or cut off from the store)";
    if (options_.on_deposed) options_.on_deposed(why);
    return false;
  }
  return true;
}

}  // namespace apollo::orchestrator
