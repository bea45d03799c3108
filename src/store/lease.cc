#include "store/lease.h"

namespace apollo::store {
namespace {
thread_local const Fence* current_fence = nullptr;
}  // namespace

FenceScope::FenceScope(const Fence* fence) : previous_(current_fence) { current_fence = fence; }
FenceScope::~FenceScope() { current_fence = previous_; }

const Fence* CurrentFence() { return current_fence; }

}  // namespace apollo::store
