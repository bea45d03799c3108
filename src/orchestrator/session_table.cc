#include "orchestrator/session_table.h"

namespace apollo::orchestrator {

bool SessionTable::Admit(const SessionHandle* handle, TimePoint now, Duration* retry_after) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<uint64_t> ticket = admission_.TryAdmit(now, handle->node_id());
  if (!ticket) {
    *retry_after = admission_.RetryAfter(handle->node_id(), now);
    return false;
  }
  // Until reconciled or gone (Remove follows a Hello that fails after this).
  admitting_[handle] = Handshake{*ticket, Duration(0)};
  return true;
}

void SessionTable::AddHandshakeTime(const SessionHandle* handle, Duration center_time) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admitting_.find(handle);
  if (it != admitting_.end()) it->second.center_time += center_time;
}

void SessionTable::EndHandshake(const SessionHandle* handle, bool reconciled, TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = admitting_.find(handle);
  if (it == admitting_.end()) return;
  if (reconciled) {
    admission_.Reconciled(it->second.ticket, it->second.center_time, now);
  } else {
    admission_.Abandoned(it->second.ticket);
  }
  admitting_.erase(it);
}

void SessionTable::Add(const std::shared_ptr<SessionHandle>& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_[handle->node_id()] = handle;
}

void SessionTable::Remove(const std::shared_ptr<SessionHandle>& handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(handle->node_id());
  if (it == sessions_.end() || it->second != handle) return;  // replaced by a newer session
  sessions_.erase(it);
  // A map keyed by what peers say must not outlive them; the next session
  // sends a fresh snapshot.
  snapshots_.erase(handle->node_id());
}

std::shared_ptr<SessionHandle> SessionTable::Connected(const std::string& node_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(node_id);
  if (it == sessions_.end() || !it->second->connected()) return nullptr;
  return it->second;
}

std::shared_ptr<SessionHandle> SessionTable::Ready(const std::string& node_id) const {
  auto s = Connected(node_id);
  return s && s->ready() ? s : nullptr;
}

void SessionTable::SetSnapshot(NodeSnapshot snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string id = snapshot.node_id;
  snapshots_[id] = std::move(snapshot);
}

std::optional<NodeSnapshot> SessionTable::Snapshot(const std::string& node_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = snapshots_.find(node_id);
  if (it == snapshots_.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeSnapshot> SessionTable::Snapshots() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<NodeSnapshot> out;
  out.reserve(snapshots_.size());
  for (const auto& [id, snap] : snapshots_) out.push_back(snap);
  return out;
}

AdmissionCounts SessionTable::admission() const {
  std::lock_guard<std::mutex> lock(mu_);
  return admission_.counts();
}

size_t SessionTable::sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

size_t SessionTable::snapshots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshots_.size();
}

std::vector<std::shared_ptr<SessionHandle>> SessionTable::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<SessionHandle>> out;
  out.reserve(sessions_.size());
  for (const auto& [node, handle] : sessions_) out.push_back(handle);
  return out;
}

}  // namespace apollo::orchestrator
