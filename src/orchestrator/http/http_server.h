#pragma once

// The orchestrator's HTTP server (`http.listen`, default 127.0.0.1:7080):
//
//   GET /healthz              200 "ok" while the process serves (no token)
//   GET /readyz               200 {"ready": true}, or 503 {"ready": false,
//                             "reason": ...} when the store or bus is not
//                             (no token)
//   GET /metrics              Prometheus text format (viewer)
//   GET /api/v1/openapi.json  the API's OpenAPI 3 document (no token)
//   GET /api/v1/stream        task changes as Server-Sent Events
//                             (task_stream.h)
//   /api/v1/...               the JSON API (json_api.h)
//   GET /...                  the dashboard: the files of `ui_dir`
//                             (index.html at /); without it, / says how
//                             to build it
//
// Built on cpp-httplib (Debian's libcpp-httplib-dev; README.md says why).
// TLS: with `tls_cert`/`tls_key` set (the gRPC port's certificate) it
// serves HTTPS only; client certificates are not asked for: callers
// authenticate with the same bearer tokens as the gRPC API
// (AccessControl), which a browser or Prometheus can send.
//
// Bounds: `threads` workers, each serving one connection at a time; at most
// 4 x threads accepted connections wait for one (then the accept loop
// stops accepting and the kernel's backlog holds the rest); bodies up to
// 16 MiB (as the gRPC port); 5 s read and write timeouts; idle keep-alive
// connections are closed after 2 s.
//
// Every error body is JSON: {"error": {"code": ..., "message": ...}}.
//
// Thread-safety: Start and Stop from one thread; handlers run on the
// workers and use only thread-safe backends.

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/config_values.h"
#include "core/status.h"
#include "orchestrator/access_control.h"
#include "orchestrator/http/json_api.h"
#include "orchestrator/http/task_stream.h"

namespace httplib {
class Server;
}

namespace apollo::orchestrator::http {

struct HttpServerOptions {
  HostPort listen{"127.0.0.1", 7080};  // port 0: the kernel picks one
  int threads = 4;
  std::string tls_cert;  // PEM paths; both set: HTTPS
  std::string tls_key;
  std::string ui_dir;  // the dashboard's files (web/dist); empty or missing: none
  std::function<void(const std::string&)> log;  // may be empty
};

// What the server serves; every pointer must outlive the server.
struct HttpBackends {
  const AccessControl* access = nullptr;  // who may read /metrics
  std::function<std::string()> metrics;   // the /metrics body
  std::function<Status()> ready;          // OK: ready; else the reason
  const JsonApi* api = nullptr;
  TaskStreams* streams = nullptr;  // /api/v1/stream; may be null
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpBackends backends);
  ~HttpServer();  // Stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the address and starts serving on a thread of its own.
  // Unavailable when the address cannot be bound; InvalidArgument when the
  // certificate or key cannot be loaded.
  Status Start();
  // Stops accepting, lets the workers finish their requests, joins.
  // Idempotent.
  void Stop();

  int port() const { return port_; }  // after Start
  bool serves_ui() const { return serves_ui_; }  // after Start
  bool tls() const { return !options_.tls_cert.empty(); }

 private:
  void Routes();

  const HttpServerOptions options_;
  const HttpBackends backends_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  bool serves_ui_ = false;
};

}  // namespace apollo::orchestrator::http
