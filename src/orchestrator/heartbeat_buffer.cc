#include "orchestrator/heartbeat_buffer.h"

#include <vector>

namespace apollo::orchestrator {

void HeartbeatBuffer::Record(store::NodeHeartbeat beat) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string id = beat.node_id;
  pending_[id] = std::move(beat);
}

void HeartbeatBuffer::Forget(const std::string& node_id) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(node_id);
}

void HeartbeatBuffer::Flush(store::StateStore& store, TimePoint now, bool force) {
  std::vector<store::NodeHeartbeat> beats;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!force && now - flushed_ < flush_every_) return;
    flushed_ = now;
    if (pending_.empty()) return;
    beats.reserve(pending_.size());
    for (auto& [id, hb] : pending_) beats.push_back(std::move(hb));
    pending_.clear();
  }
  if (!store.RecordHeartbeats(beats).ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& hb : beats) pending_.try_emplace(hb.node_id, std::move(hb));
  }
}

}  // namespace apollo::orchestrator
