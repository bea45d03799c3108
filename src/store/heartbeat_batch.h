#pragma once

// StateStore::RecordHeartbeats for both backends: the beats go to the
// backend's writer as ONE op (weight: one per beat), which runs each through
// the backend's own `write_one(txn, node_id, at, mode)` in that transaction;
// a node not registered (kNotFound) is skipped, any other error fails the
// batch. Returns how many were recorded.

#include <span>
#include <utility>
#include <vector>

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

// Submits the batch to `writer` (a backend's Writer, whose Submit<T>(weight,
// fn) runs fn(WriteTxn&) in a transaction) and waits for it.
template <class Writer, class WriteOne>
Result<int> SubmitHeartbeatBatch(Writer& writer, std::span<const NodeHeartbeat> beats,
                                 WriteOne write_one) {
  if (beats.empty()) return 0;
  std::vector<NodeHeartbeat> copy(beats.begin(), beats.end());
  const int weight = static_cast<int>(copy.size());
  return writer
      .template Submit<int>(weight,
                            [b = std::move(copy), write_one](auto& txn) -> Result<int> {
                              return RecordHeartbeatBatch(
                                  txn, std::span<const NodeHeartbeat>(b), write_one);
                            })
      .get();
}

}  // namespace apollo::store
