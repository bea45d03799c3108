// The operator API's view of several orchestrators (docs/replicas.md): the
// replicas sharing this store and the leader lease, read from the store, so
// every replica answers the same (plus which one answered).
#include "orchestrator/api_service.h"

namespace apollo::orchestrator {
namespace {

int64_t Ms(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

}  // namespace

grpc::Status ApiService::ClusterStatus(grpc::ServerContext* ctx,
                                       const apollo::v1::ClusterStatusRequest*,
                                       apollo::v1::ClusterStatusResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "cluster.status"); !a.ok()) return a;
  const Leadership* leadership = orchestrator_.leadership();
  const bool single = leadership == nullptr || leadership->options().single;
  const TimePoint now = clock_.Now();
  resp->set_mode(single ? "single" : "replicated");
  resp->set_answered_by(leadership ? leadership->replica_id()
                                   : orchestrator_.options().orchestrator_id);
  resp->set_answered_by_leader(orchestrator_.Leads());
  resp->set_now_ms(Ms(now));
  if (single) return grpc::Status::OK;
  resp->set_lease_ttl_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(leadership->options().ttl).count());
  Result<store::ClusterView> view = store_.ReadCluster();
  if (!view.ok()) return ToGrpc(view.status());
  std::string live_leader;
  for (const store::LeaseRow& l : view->leases) {
    auto* out = resp->add_leases();
    out->set_name(l.lease);
    out->set_holder(l.holder);
    out->set_address(l.address);
    out->set_epoch(l.epoch);
    out->set_acquired_at_ms(Ms(l.acquired_at));
    out->set_renewed_at_ms(Ms(l.renewed_at));
    out->set_expires_at_ms(Ms(l.expires_at));
    if (l.lease == store::kLeaderLease && l.expires_at > now) live_leader = l.holder;
  }
  for (const store::ReplicaRow& r : view->replicas) {
    auto* out = resp->add_replicas();
    out->set_replica_id(r.replica_id);
    out->set_address(r.address);
    out->set_started_at_ms(Ms(r.started_at));
    out->set_seen_at_ms(Ms(r.seen_at));
    out->set_leader(!live_leader.empty() && r.replica_id == live_leader);
  }
  return grpc::Status::OK;
}

}  // namespace apollo::orchestrator
