#include "bus/event_bus.h"

namespace apollo::bus {

int PartitionOf(std::string_view task_id, int partitions) {
  if (partitions <= 1) return 0;
  uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  for (unsigned char c : task_id) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<int>(h % static_cast<uint64_t>(partitions));
}

}  // namespace apollo::bus
