#include "orchestrator/concurrency_limit.h"

namespace apollo::orchestrator {

ConcurrencyLimit::Lease& ConcurrencyLimit::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Release();
    limit_ = other.limit_;
    other.limit_ = nullptr;
  }
  return *this;
}

void ConcurrencyLimit::Lease::Release() {
  if (limit_ != nullptr) limit_->in_use_.fetch_sub(1);
  limit_ = nullptr;
}

std::optional<ConcurrencyLimit::Lease> ConcurrencyLimit::TryAcquire() {
  // Take a slot, and give it back if that went over: never more than
  // capacity_ held at once, without a lock.
  if (in_use_.fetch_add(1) >= capacity_) {
    in_use_.fetch_sub(1);
    refused_.fetch_add(1);
    return std::nullopt;
  }
  return Lease(this);
}

}  // namespace apollo::orchestrator
