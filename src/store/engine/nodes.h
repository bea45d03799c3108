#pragma once

// Node rows on the write side: creating the rows tasks name, registering
// agents, recording heartbeats. Writer thread only.

#include <set>
#include <span>
#include <string>

#include "store/engine/write_txn.h"
#include "store/types.h"

namespace apollo::store::engine {

// Finds or creates (unregistered, with a node_seq row) every node in `ids`;
// their facts, registration read fresh.
Result<NodeFacts> EnsureNodes(WriteTxn& txn, const std::set<std::string>& ids);

// Inserts or replaces the node's registration; rows that waited only for
// the node to register are pending again.
Status WriteNode(WriteTxn& txn, const NodeInfo& node);

// Heartbeat time (and mode when non-empty) of the registered nodes among
// `beats`, in one statement; the latest beat of a node repeated wins.
// Returns how many nodes were recorded.
Result<int> WriteHeartbeats(WriteTxn& txn, std::span<const NodeHeartbeat> beats);

}  // namespace apollo::store::engine
