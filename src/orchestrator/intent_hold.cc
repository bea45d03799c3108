#include "orchestrator/intent_hold.h"

#include <algorithm>

#include "orchestrator/intent_batches.h"

namespace apollo::orchestrator {

using apollo::v1::CenterMessage;

std::optional<CenterMessage> IntentHold::Offer(CenterMessage msg, bool busy) {
  if (!unanswered_ && !busy && !held_) {
    unanswered_ = true;
    last_offer_ = Held::kNo;
    return msg;
  }
  ++messages_held_;
  // It joins the held message, if any, and waits for what that waits for.
  const Held reason = busy ? Held::kBusy : Held::kUnanswered;
  last_offer_ = held_ ? why_ : reason;
  const size_t bytes = msg.intents().ByteSizeLong();
  std::optional<CenterMessage> now;
  if (held_ && held_bytes_ + bytes > max_bytes_) now = Take();
  if (!held_) {
    // A held message keeps the reason it started with (and so its limit).
    if (!now) why_ = reason;
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
  unanswered_ = false;
  // A busy hold waits for its limit all the same.
  if (held_ && why_ == Held::kBusy) return std::nullopt;
  return Release();  // what goes now is unanswered in turn (Take)
}

std::optional<CenterMessage> IntentHold::Release() {
  if (!held_) return std::nullopt;
  return Take();
}

CenterMessage IntentHold::Take() {
  CenterMessage out = std::move(*held_);
  held_.reset();
  held_bytes_ = 0;
  unanswered_ = true;
  // Each part came sorted; together, high priority goes first again.
  auto* intents = out.mutable_intents()->mutable_intents();
  std::stable_sort(intents->pointer_begin(), intents->pointer_end(),
                   [](const apollo::v1::Intent* a, const apollo::v1::Intent* b) {
                     return IntentRank(*a) < IntentRank(*b);
                   });
  return out;
}

}  // namespace apollo::orchestrator
