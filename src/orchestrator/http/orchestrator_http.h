#pragma once

// The HTTP server of a running orchestrator, put together in one place so
// main.cc only starts and stops it: the JSON API over an in-process channel
// to the orchestrator's own gRPC server, /metrics from a MetricsScraper,
// /readyz from the store and the bus, the gRPC port's certificate for TLS.
//
// Thread-safety: Start and Stop from one thread (main's).

#include <grpcpp/grpcpp.h>

#include <memory>

#include "bus/event_bus.h"
#include "core/clock.h"
#include "orchestrator/access_control.h"
#include "orchestrator/http/http_server.h"
#include "orchestrator/http/json_api.h"
#include "orchestrator/http/task_stream.h"
#include "orchestrator/metrics/scrape.h"
#include "orchestrator/orchestrator.h"
#include "orchestrator/orchestrator_config.h"
#include "store/state_store.h"

namespace apollo::orchestrator::http {

// Ready when the store answers a read and the bus reports its lag; the
// reason otherwise (Unavailable).
Status Readiness(store::StateStore& store, bus::EventBus* bus);

// Everything a running HTTP server holds.
class OrchestratorHttp {
 public:
  struct Parts {
    HttpConfig http;                      // listen, threads
    tls::TlsPaths tls;                    // the gRPC port's: its cert and key serve HTTPS
    grpc::Server* grpc_server = nullptr;  // started; serves apollo.v1.Orchestrator
    store::StateStore* store = nullptr;
    const Orchestrator* orchestrator = nullptr;
    bus::EventBus* bus = nullptr;  // may be null
    const AccessControl* access = nullptr;
    OrchestratorMetrics* metrics = nullptr;
    const Clock* clock = nullptr;
    std::function<void(const std::string&)> log;
    const SessionTraffic* traffic = nullptr;  // the gateway's; may be null
  };

  // Starts serving http.listen; everything in `parts` must outlive
  // the result. Not OK (with the reason) when it cannot listen.
  static Result<std::unique_ptr<OrchestratorHttp>> Start(const Parts& parts);
  ~OrchestratorHttp() { Stop(); }

  void Stop() { server_->Stop(); }
  int port() const { return server_->port(); }
  bool tls() const { return server_->tls(); }
  bool serves_ui() const { return server_->serves_ui(); }

 private:
  OrchestratorHttp() = default;

  std::unique_ptr<JsonApi> api_;
  std::unique_ptr<TaskStreams> streams_;
  std::unique_ptr<MetricsScraper> scraper_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace apollo::orchestrator::http
