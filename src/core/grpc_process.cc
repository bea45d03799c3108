#include "core/grpc_process.h"

#include <absl/synchronization/mutex.h>

namespace apollo {

void ApplyGrpcProcessSettings() {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace apollo
