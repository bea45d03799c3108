#include "orchestrator/intent_hold.h"

#include <algorithm>

#include "orchestrator/intent_batches.h"

namespace apollo::orchestrator {

using apollo::v1::CenterMessage;

std::optional<CenterMessage> IntentHold::Offer(CenterMessage msg) {
  if (!unanswered_) {
    unanswered_ = true;
    return msg;
  }
  ++messages_held_;
  const size_t bytes = msg.intents().ByteSizeLong();
  std::optional<CenterMessage> now;
  if (held_ && held_bytes_ + bytes > max_bytes_) now = Take();
  if (!held_) {
    held_ = std::move(msg);
    held_bytes_ = bytes;
    return now;
  }
  auto* into = held_->mutable_intents()->mutable_intents();
  for (auto& intent : *msg.mutable_intents()->mutable_intents()) {
    *into->Add() = std::move(intent);
  }
  held_bytes_ += bytes;
  return now;
}

std::optional<CenterMessage> IntentHold::Answered() {
  unanswered_ = holding();  // what goes now is unanswered in turn
  return Release();
}

std::optional<CenterMessage> IntentHold::Release() {
  if (!held_) return std::nullopt;
  return Take();
}

CenterMessage IntentHold::Take() {
  CenterMessage out = std::move(*held_);
  held_.reset();
  held_bytes_ = 0;
  // Each part came sorted; together, high priority goes first again.
  auto* intents = out.mutable_intents()->mutable_intents();
  std::stable_sort(intents->pointer_begin(), intents->pointer_end(),
                   [](const apollo::v1::Intent* a, const apollo::v1::Intent* b) {
                     return IntentRank(*a) < IntentRank(*b);
                   });
  return out;
}

}  // namespace apollo::orchestrator
