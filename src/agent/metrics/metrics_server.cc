#include "agent/metrics/metrics_server.h"

#include <httplib.h>

#include <chrono>

namespace apollo::agent {

MetricsServer::MetricsServer(HostPort listen, std::function<std::string()> metrics)
    : listen_(std::move(listen)), metrics_(std::move(metrics)) {}

MetricsServer::~MetricsServer() { Stop(); }

Status MetricsServer::Start() {
  server_ = std::make_unique<httplib::Server>();
  server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  // SO_REUSEADDR only (httplib's default adds SO_REUSEPORT, which would let
  // two agents share a port silently).
  server_->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->set_read_timeout(std::chrono::seconds(5));
  server_->set_write_timeout(std::chrono::seconds(5));
  server_->set_keep_alive_timeout(2);
  server_->set_payload_max_length(1 << 16);
  server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content("{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no route " + req.method +
                        " " + req.path + " (the agent serves /metrics and /healthz)\"}}",
                    "application/json");
  });
  if (listen_.port == 0) {
    port_ = server_->bind_to_any_port(listen_.host);
  } else if (server_->bind_to_port(listen_.host, listen_.port)) {
    port_ = listen_.port;
  }
  if (port_ <= 0) {
    port_ = 0;
    server_.reset();
    return Status::Unavailable("metrics: cannot listen on " + listen_.ToString() +
                               " (address in use, or not an address of this host?)");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // httplib's stop() does nothing until the accept loop runs (see the
  // orchestrator's HttpServer::Start).
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::Ok();
}

void MetricsServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace apollo::agent
