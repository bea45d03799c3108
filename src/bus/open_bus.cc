#include "bus/open_bus.h"

#include "bus/embedded/embedded_bus.h"
#include "bus/nats/nats_bus.h"

namespace apollo::bus {

Result<std::unique_ptr<EventBus>> OpenEventBus(std::string_view url, const BusOptions& options,
                                               store::StateStore& store, const Clock& clock) {
  if (options.partitions < 1 || options.max_deliver < 1 || options.batch_max < 1) {
    return Status::InvalidArgument("bus options: partitions, max_deliver, batch_max must be >= 1");
  }
  if (url == "embedded" || url.empty()) return NewEmbeddedBus(options, store, clock);
  if (url.rfind("nats://", 0) == 0) {
    return NewNatsBus(std::string(url), options, store, clock);
  }
  return Status::InvalidArgument("bus must be 'embedded' or nats://host:port, not '" +
                                 std::string(url) + "'");
}

}  // namespace apollo::bus
