#pragma once

// EventIngest: agents' event batches on their way into the store (through
// the event bus when there is one), and the thread that acknowledges each
// agent only after its batch committed, in the order the batches came. Owns
// the batches in flight and that thread. What a committed batch means for
// the rest of the center (circuit breakers, watches, callbacks, a dispatch
// pass) is the caller's `on_committed`.
//
// Thread-safety: Submit may be called from any thread; Start/Stop from one.

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apollo/v1/agent.pb.h"
#include "bus/event_bus.h"
#include "core/event.h"
#include "orchestrator/agent_session.h"
#include "store/state_store.h"

namespace apollo::orchestrator {

class EventIngest {
 public:
  // One event of a batch, as the caller needs it once committed.
  struct Sent {
    std::string task_id;
    EventType type;
    // FAILED "interrupted by agent restart": says nothing about the intent,
    // so it must not count towards its circuit breaker.
    bool interrupted = false;
  };
  using Committed = std::function<void(const std::string& node_id, const std::vector<Sent>& events,
                                       const store::ApplyResult& result)>;

  // `store` must outlive this object.
  EventIngest(store::StateStore& store, Committed on_committed);
  ~EventIngest();

  // Routes batches through `bus` (started by the caller, outliving this)
  // instead of straight into the store. Call before Start.
  void SetEventBus(bus::EventBus* bus) { bus_ = bus; }
  void Start();
  // Finishes the batches in flight, then stops the thread.
  void Stop();

  // Takes `batch` from `handle`'s node (an event naming another node is
  // dropped; one that does not parse is kept, so the store records it as
  // malformed) and sends it on; done(acked seq) once committed. On a store
  // or bus error nothing is acknowledged and the session is closed: the
  // agent keeps the events in its WAL and resends them on a new session.
  void Submit(const std::shared_ptr<SessionHandle>& handle, apollo::v1::EventBatch batch,
              std::function<void(uint64_t)> done);

 private:
  struct Pending {
    std::future<Result<store::ApplyResult>> result;
    std::string node_id;
    std::shared_ptr<SessionHandle> handle;  // closed when the commit fails
    std::function<void(uint64_t)> done;
    std::vector<Sent> events;  // batch order
  };
  void Loop();

  store::StateStore& store_;
  const Committed on_committed_;
  bus::EventBus* bus_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;  // guarded by mu_
  bool stop_ = false;          // guarded by mu_
  std::thread thread_;
};

}  // namespace apollo::orchestrator
