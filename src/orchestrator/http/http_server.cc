#include "orchestrator/http/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "orchestrator/http/openapi.h"

namespace apollo::orchestrator::http {
namespace {

constexpr size_t kMaxBody = 16 << 20;
constexpr char kJson[] = "application/json";

// httplib's task queue with a bound on waiting connections: when it is
// full, enqueue (called by the accept loop only) waits for room, so the
// accept loop stops accepting and the kernel's backlog holds the rest.
// (httplib's own ThreadPool queues without bound.)
class BoundedPool final : public httplib::TaskQueue {
 public:
  BoundedPool(size_t threads, size_t max_waiting) : max_waiting_(max_waiting) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [this] { return jobs_.size() < max_waiting_; });
    jobs_.push_back(std::move(fn));
    work_.notify_one();
  }
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    work_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // shut down and drained
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      room_.notify_one();
      fn();
    }
  }

  const size_t max_waiting_;
  std::mutex mu_;
  std::condition_variable work_, room_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool shutdown_ = false;                   // guarded by mu_
  std::vector<std::thread> threads_;
};

std::string BearerToken(const httplib::Request& req) {
  std::string v = req.get_header_value("Authorization");
  if (v.rfind(kBearer, 0) != 0) return std::string();
  return v.substr(kBearer.size());
}

void SendJson(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJson);
}

void SendError(httplib::Response& res, StatusCode code, const std::string& message) {
  ApiResponse r = ErrorResponse(code, message);
  SendJson(res, r.status, r.body);
}

std::string Peer(const httplib::Request& req) {
  return "http:" + req.remote_addr + ":" + std::to_string(req.remote_port);
}

ApiRequest ToApiRequest(const httplib::Request& req) {
  ApiRequest r;
  r.method = req.method;
  r.path = req.path;
  r.query.insert(req.params.begin(), req.params.end());
  r.content_type = req.get_header_value("Content-Type");
  r.body = req.body;
  r.bearer_token = BearerToken(req);
  r.peer = Peer(req);
  return r;
}

}  // namespace

HttpServer::HttpServer(HttpServerOptions options, HttpBackends backends)
    : options_(std::move(options)), backends_(std::move(backends)) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  if (tls()) {
    auto ssl =
        std::make_unique<httplib::SSLServer>(options_.tls_cert.c_str(), options_.tls_key.c_str());
    if (!ssl->is_valid()) {
      return Status::InvalidArgument("http: cannot load the TLS certificate " + options_.tls_cert +
                                     " and key " + options_.tls_key);
    }
    server_ = std::move(ssl);
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  const size_t threads = static_cast<size_t>(std::max(1, options_.threads));
  // httplib owns (and deletes) the queue it gets from this factory.
  server_->new_task_queue = [threads] { return new BoundedPool(threads, 4 * threads); };
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, which lets
  // a second orchestrator bind the same port and silently share its
  // connections instead of being told the address is in use.
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->set_payload_max_length(kMaxBody);
  server_->set_read_timeout(std::chrono::seconds(5));
  server_->set_write_timeout(std::chrono::seconds(5));
  server_->set_keep_alive_timeout(2);
  Routes();
  const std::string& host = options_.listen.host;
  if (options_.listen.port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, options_.listen.port)) {
    port_ = options_.listen.port;
  }
  if (port_ <= 0) {
    port_ = 0;
    server_.reset();
    return Status::Unavailable("http: cannot listen on " + options_.listen.ToString() +
                               " (address in use, or not an address of this host?)");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // Until the accept loop runs, httplib's stop() does nothing (it only
  // closes a running server's socket) and a Stop right after Start would
  // wait forever for the thread: return once it runs (bounded).
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::Ok();
}

void HttpServer::Stop() {
  // Streams hold workers until their client goes: end them first.
  if (backends_.streams) backends_.streams->CancelAll();
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

void HttpServer::Routes() {
  httplib::Server& s = *server_;
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    Status st = backends_.ready ? backends_.ready() : Status::Ok();
    nlohmann::json j = {{"ready", st.ok()}};
    if (!st.ok()) j["reason"] = st.message();
    SendJson(res, st.ok() ? 200 : 503, Dump(j));
  });
  s.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    if (backends_.access) {
      Decision d =
          backends_.access->Check(BearerToken(req), Peer(req), Role::kViewer, "metrics.read");
      if (!d.status.ok()) return SendError(res, d.status.code(), d.status.message());
    }
    res.set_content(backends_.metrics ? backends_.metrics() : std::string(),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  // The dashboard: its files, or a page that says how to get them.
  serves_ui_ = !options_.ui_dir.empty() &&
               s.set_mount_point("/", options_.ui_dir,
                                 {{"X-Content-Type-Options", "nosniff"},
                                  {"X-Frame-Options", "DENY"},
                                  {"Content-Security-Policy",
                                   "default-src 'self'; style-src 'self' 'unsafe-inline'; "
                                   "img-src 'self' data:; frame-ancestors 'none'"}});
  if (!serves_ui_) {
    const std::string why = options_.ui_dir.empty() ? std::string("no http.ui_dir is set")
                                                    : "there is no directory " + options_.ui_dir;
    s.Get("/", [why](const httplib::Request&, httplib::Response& res) {
      res.status = 404;
      res.set_content("The dashboard is not served here: " + why +
                          ".\nBuild it with `make ui` (web/dist), or point http.ui_dir "
                          "(--http-ui-dir) at its files.\nThe JSON API is at /api/v1/ "
                          "(/api/v1/openapi.json); metrics at /metrics.\n",
                      "text/plain; charset=utf-8");
    });
  }
  s.Get("/api/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, Dump(OpenApiDocument()));
  });
  s.Get("/api/v1/stream", [this](const httplib::Request& req, httplib::Response& res) {
    if (!backends_.streams) return SendError(res, StatusCode::kUnavailable, "no event streams");
    ApiResponse error;
    std::shared_ptr<TaskStream> stream = backends_.streams->Open(ToApiRequest(req), &error);
    if (!stream) return SendJson(res, error.status, error.body);
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream", [stream](size_t, httplib::DataSink& sink) {
          std::string chunk;
          if (!stream->Next(&chunk)) {
            sink.done();
            return true;
          }
          return sink.write(chunk.data(), chunk.size());  // false: the client is gone
        });
  });
  auto api = [this](const httplib::Request& req, httplib::Response& res) {
    if (!backends_.api) return SendError(res, StatusCode::kUnavailable, "no API");
    ApiResponse out = backends_.api->Handle(ToApiRequest(req));
    SendJson(res, out.status, out.body);
  };
  // Every method on /api/v1/: the API answers unknown routes and methods
  // itself (JSON 404 / 405).
  s.Get("/api/v1/.*", api);
  s.Post("/api/v1/.*", api);
  s.Put("/api/v1/.*", api);
  s.Delete("/api/v1/.*", api);
  s.Patch("/api/v1/.*", api);
  // httplib's own errors (unknown path, body too large, ...) as JSON too.
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    StatusCode code = res.status == 404   ? StatusCode::kNotFound
                      : res.status == 413 ? StatusCode::kResourceExhausted
                      : res.status < 500  ? StatusCode::kInvalidArgument
                                          : StatusCode::kInternal;
    std::string message = res.status == 404 ? "no route " + req.method + " " + req.path +
                                                  " (the routes are in /api/v1/openapi.json)"
                                            : "HTTP " + std::to_string(res.status);
    const int status = res.status;
    SendError(res, code, message);
    res.status = status;
  });
  s.set_exception_handler(
      [this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        if (options_.log) options_.log("http: a handler failed: " + what);
        SendError(res, StatusCode::kInternal, what);
      });
}

}  // namespace apollo::orchestrator::http
