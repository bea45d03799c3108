#include "orchestrator/http/orchestrator_http.h"

#include <algorithm>
#include <limits>

namespace apollo::orchestrator::http {

Status Readiness(store::StateStore& store, bus::EventBus* bus) {
  // An indexed read that returns nothing: it proves the database answers.
  if (auto r = store.ListAlerts(std::numeric_limits<int64_t>::max(), 1); !r.ok()) {
    return Status::Unavailable("store: " + r.status().message());
  }
  if (bus) {
    if (auto lag = bus->Lag(); !lag.ok()) {
      return Status::Unavailable("bus " + bus->Name() + ": " + lag.status().message());
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<OrchestratorHttp>> OrchestratorHttp::Start(const Parts& p) {
  std::unique_ptr<OrchestratorHttp> h(new OrchestratorHttp());
  // Calls through the gRPC server's own handlers (json_api.h): a minute is
  // the longest an operator call should take (a dead-letter replay waits
  // for its commits).
  h->api_ = std::make_unique<JsonApi>(
      apollo::v1::Orchestrator::NewStub(p.grpc_server->InProcessChannel(grpc::ChannelArguments())),
      std::chrono::seconds(60));
  // Event streams hold a worker each while open: two workers stay for
  // the other requests.
  h->streams_ = std::make_unique<TaskStreams>(
      apollo::v1::Orchestrator::NewStub(p.grpc_server->InProcessChannel(grpc::ChannelArguments())),
      std::max(1, p.http.threads - 2));
  h->scraper_ =
      std::make_unique<MetricsScraper>(*p.metrics, *p.store, *p.orchestrator, p.bus, *p.clock,
                                       p.traffic);
  HttpServerOptions options;
  options.listen = p.http.listen;
  options.threads = p.http.threads;
  options.ui_dir = p.http.ui_dir;
  if (p.tls.complete()) {
    options.tls_cert = p.tls.cert;
    options.tls_key = p.tls.key;
  }
  options.log = p.log;
  HttpBackends backends;
  backends.access = p.access;
  backends.metrics = [s = h->scraper_.get()] { return s->Scrape(); };
  backends.ready = [store = p.store, bus = p.bus] { return Readiness(*store, bus); };
  backends.api = h->api_.get();
  backends.streams = h->streams_.get();
  h->server_ = std::make_unique<HttpServer>(std::move(options), std::move(backends));
  APOLLO_RETURN_IF_ERROR(h->server_->Start());
  return h;
}

}  // namespace apollo::orchestrator::http
