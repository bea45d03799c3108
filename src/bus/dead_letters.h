#pragma once

// Operator actions on parked events, shared by every backend. They go to the
// store directly, not through the partitions: a replayed event is old, and
// its task's later events were applied long ago.
//
// Thread-safety: as thread-safe as the store and the book.

#include <cstdint>

#include "bus/applier.h"
#include "store/state_store.h"

namespace apollo::bus {

// Applies the letter's event if its cause is gone (it validates and its
// (task, node) exists), then removes the letter. kFailedPrecondition with the
// reason if it is still poison (the letter stays); kNotFound; store errors.
Status ReplayLetter(store::StateStore& store, DeadLetterBook& book, int64_t id);
// Replays every letter; returns how many were applied. Stops on a store
// error; letters still poison are skipped.
Result<int> ReplayAllLetters(store::StateStore& store, DeadLetterBook& book);
// Applies the event as is (the store records it as malformed / unknown with an
// alert and its sequence number is consumed), then removes the letter.
Status DropLetter(store::StateStore& store, DeadLetterBook& book, int64_t id);

}  // namespace apollo::bus
