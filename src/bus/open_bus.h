#pragma once

// The one way to obtain an EventBus: by the config's `bus` value.
//
//   embedded           in-process partitions (default)
//   nats://host:port   NATS JetStream
//
// `store` and `clock` must outlive the bus. The bus is returned not started.

#include <memory>
#include <string_view>

#include "bus/event_bus.h"
#include "core/clock.h"
#include "store/state_store.h"

namespace apollo::bus {

Result<std::unique_ptr<EventBus>> OpenEventBus(std::string_view url, const BusOptions& options,
                                               store::StateStore& store, const Clock& clock);

}  // namespace apollo::bus
