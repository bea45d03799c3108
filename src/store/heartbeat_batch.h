#pragma once

// The body both backends run, inside one write transaction, for
// StateStore::RecordHeartbeats: each beat through the backend's own
// `write_one(txn, node_id, at, mode)`; a node not registered (kNotFound) is
// skipped, any other error fails the batch. Returns how many were recorded.

#include <span>

#include "store/types.h"

namespace apollo::store {

template <class Txn, class WriteOne>
Result<int> RecordHeartbeatBatch(Txn& txn, std::span<const NodeHeartbeat> beats,
                                 WriteOne write_one) {
  int recorded = 0;
  for (const NodeHeartbeat& h : beats) {
    Status s = write_one(txn, h.node_id, h.at, h.mode);
    if (s.code() == StatusCode::kNotFound) continue;  // not registered: skipped
    APOLLO_RETURN_IF_ERROR(s);
    ++recorded;
  }
  return recorded;
}

}  // namespace apollo::store
