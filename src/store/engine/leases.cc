// Leases and fences (lease.h): the claim that renews or takes a lease, the
// release, the cluster view, and the check a fenced write op runs first in
// its own transaction.
#include "store/engine/queries.h"
#include "store/engine/write_paths.h"

namespace apollo::store::engine {
namespace {

constexpr sql::Statement kEnsureLease{
    "INSERT INTO leases(name, holder, address, epoch, acquired_at, renewed_at, expires_at) "
    "VALUES ($1, '', '', 0, 0, 0, 0) ON CONFLICT (name) DO NOTHING"};
#define APOLLO_LEASE_COLUMNS "name, holder, address, epoch, acquired_at, renewed_at, expires_at "
constexpr sql::Statement kLockLease{"SELECT " APOLLO_LEASE_COLUMNS
                                    "FROM leases WHERE name = $1 /*@pg FOR UPDATE*/"};
constexpr sql::Statement kLeases{"SELECT " APOLLO_LEASE_COLUMNS "FROM leases ORDER BY name"};
#undef APOLLO_LEASE_COLUMNS
constexpr sql::Statement kRenew{
    "UPDATE leases SET address = $3, renewed_at = $4, expires_at = $5 "
    "WHERE name = $1 AND holder = $2"};
constexpr sql::Statement kTake{
    "UPDATE leases SET holder = $2, address = $3, epoch = epoch + 1, acquired_at = $4, "
    "renewed_at = $4, expires_at = $5 WHERE name = $1"};
constexpr sql::Statement kRelease{
    "UPDATE leases SET expires_at = $4 WHERE name = $1 AND holder = $2 AND epoch = $3 "
    "AND expires_at > $4"};
constexpr sql::Statement kSeen{
    "INSERT INTO replicas(replica_id, address, started_at, seen_at) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (replica_id) DO UPDATE SET address = excluded.address, "
    "started_at = excluded.started_at, seen_at = excluded.seen_at"};
constexpr sql::Statement kReplicas{
    "SELECT replica_id, address, started_at, seen_at FROM replicas ORDER BY started_at, "
    "replica_id"};
// Shared: a taker's UPDATE waits until the fenced transaction ended, and a
// fenced write that comes after the taker's commit sees the new epoch.
constexpr sql::Statement kFenceRow{
    "SELECT holder, epoch FROM leases WHERE name = $1 /*@pg FOR SHARE*/"};

LeaseRow ReadLease(sql::Rows& r, size_t i) {
  LeaseRow row;
  row.lease = r.TakeText(i, 0);
  row.holder = r.TakeText(i, 1);
  row.address = r.TakeText(i, 2);
  row.epoch = r.Int(i, 3);
  row.acquired_at = FromUnixMicros(r.Int(i, 4));
  row.renewed_at = FromUnixMicros(r.Int(i, 5));
  row.expires_at = FromUnixMicros(r.Int(i, 6));
  return row;
}

}  // namespace

Result<LeaseRow> WriteLeaseClaim(WriteTxn& txn, const LeaseClaim& claim) {
  if (claim.lease.empty() || claim.replica_id.empty()) {
    return Status::InvalidArgument("a lease claim needs a lease name and a replica id");
  }
  const int64_t ttl_us = std::chrono::duration_cast<std::chrono::microseconds>(claim.ttl).count();
  if (ttl_us <= 0) return Status::InvalidArgument("a lease needs a positive ttl");
  const int64_t now = txn.now_us();
  txn.Exec(kSeen,
           sql::Params(claim.replica_id, claim.address, ToUnixMicros(claim.started_at), now));
  txn.Exec(kEnsureLease, sql::Params(claim.lease));
  Result<sql::Rows> r = txn.Query(kLockLease, sql::Params(claim.lease));
  if (!r.ok()) return r.status();
  if (r->empty()) return Status::Internal("lease " + claim.lease + " vanished while locked");
  LeaseRow row = ReadLease(*r, 0);
  const bool mine = row.holder == claim.replica_id;
  if (mine && row.epoch == claim.epoch) {
    txn.Exec(kRenew, sql::Params(claim.lease, claim.replica_id, claim.address, now, now + ttl_us));
    row.address = claim.address;
    row.renewed_at = FromUnixMicros(now);
    row.expires_at = FromUnixMicros(now + ttl_us);
    return row;
  }
  // Free, expired, or held by an earlier run of this replica (same id, an
  // epoch it does not know): taken, and the epoch fences whoever held it.
  if (row.holder.empty() || ToUnixMicros(row.expires_at) <= now || mine) {
    txn.Exec(kTake, sql::Params(claim.lease, claim.replica_id, claim.address, now, now + ttl_us));
    row.holder = claim.replica_id;
    row.address = claim.address;
    row.epoch += 1;
    row.acquired_at = row.renewed_at = FromUnixMicros(now);
    row.expires_at = FromUnixMicros(now + ttl_us);
  }
  return row;
}

Status WriteLeaseRelease(WriteTxn& txn, std::string_view lease, std::string_view holder,
                         int64_t epoch) {
  txn.Exec(kRelease, sql::Params(std::string(lease), std::string(holder), epoch, txn.now_us()));
  return Status::Ok();
}

void AskFence(WriteTxn& txn, const Fence& fence, FenceAnswer& answer) {
  answer.fence = &fence;
  txn.Exec(kFenceRow, sql::Params(fence.lease), nullptr, &answer.rows, &answer.arrived);
}

Status FenceVerdict(FenceAnswer& answer) {
  const Fence& fence = *answer.fence;
  sql::Rows& r = answer.rows;
  const std::string holder = r.empty() ? std::string() : r.TakeText(0, 0);
  const int64_t epoch = r.empty() ? 0 : r.Int(0, 1);
  if (holder == fence.holder && epoch == fence.epoch) return Status::Ok();
  return Status::FailedPrecondition(
      std::string(kFencedPrefix) + "the write of " + fence.holder + " at lease '" + fence.lease +
      "' epoch " + std::to_string(fence.epoch) + " was refused; the lease is now at epoch " +
      std::to_string(epoch) + (holder.empty() ? "" : ", held by " + holder));
}

Result<ClusterView> QueryCluster(sql::Conn& db) {
  ClusterView view;
  Result<sql::Rows> l = db.Query(kLeases);
  if (!l.ok()) return l.status();
  for (size_t i = 0; i < l->size(); ++i) view.leases.push_back(ReadLease(*l, i));
  Result<sql::Rows> r = db.Query(kReplicas);
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < r->size(); ++i) {
    view.replicas.push_back(ReplicaRow{r->TakeText(i, 0), r->TakeText(i, 1),
                                       FromUnixMicros(r->Int(i, 2)), FromUnixMicros(r->Int(i, 3))});
  }
  return view;
}

}  // namespace apollo::store::engine
