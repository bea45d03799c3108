#pragma once

// A fake apollo.v1.Orchestrator for apollo-cli's tests: canned answers set
// by the test, and a record of what the CLI asked. Serve it with
// grpc::ServerBuilder on 127.0.0.1:0.

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apollo/v1/api.grpc.pb.h"

namespace apollo::cli::test_support {

// Canned answers, and a record of what was asked. Thread-safe: gRPC calls
// it from its own threads while the test thread reads and writes it.
class FakeOrchestrator final : public v1::Orchestrator::Service {
 public:
  std::mutex mu;
  std::map<std::string, v1::Task> tasks;                  // GUARDED_BY(mu)
  std::map<std::string, v1::TaskEventsResponse> history;  // GUARDED_BY(mu)
  std::vector<v1::Task> watch_updates;           // GUARDED_BY(mu); sent, then the stream ends
  v1::SubmitTasksResponse submit_response;       // GUARDED_BY(mu)
  std::vector<v1::SubmitTasksRequest> submits;   // GUARDED_BY(mu)
  v1::ListTasksRequest last_list;                // GUARDED_BY(mu)
  v1::ListNodesResponse nodes;                   // GUARDED_BY(mu)
  v1::CancelTaskRequest last_cancel;             // GUARDED_BY(mu)
  grpc::Status retry_status = grpc::Status::OK;  // GUARDED_BY(mu)
  // After watch_updates, keep the stream open until the client cancels it
  // (at most 10 s), as a server that streams forever would.
  bool watch_hold_open = false;  // GUARDED_BY(mu)
  bool watch_cancelled = false;  // GUARDED_BY(mu); the client cancelled a held stream
  // Event bus: letters by id; replay fails for ids in still_poison.
  std::map<int64_t, v1::DeadLetter> letters;       // GUARDED_BY(mu)
  std::map<int64_t, std::string> still_poison;     // GUARDED_BY(mu); id -> reason
  v1::ListDeadLettersRequest last_dlq_list;        // GUARDED_BY(mu)
  v1::BusStatusResponse bus_status;                // GUARDED_BY(mu)
  // Alerts: the canned answer, and the last request.
  v1::ListAlertsResponse alerts;                    // GUARDED_BY(mu)
  v1::ListAlertsRequest last_alert_list;            // GUARDED_BY(mu)
  std::string last_authorization;                   // of the last ListNodes; GUARDED_BY(mu)
  // Tokens and the audit trail: canned answers, and the last requests.
  v1::CreateTokenRequest last_token_create;  // GUARDED_BY(mu)
  v1::ListAuditRequest last_audit_list;      // GUARDED_BY(mu)
  v1::ListAuditResponse audit;               // GUARDED_BY(mu)

  grpc::Status SubmitTasks(grpc::ServerContext*, const v1::SubmitTasksRequest* req,
                           v1::SubmitTasksResponse* resp) override {
    std::lock_guard lock(mu);
    submits.push_back(*req);
    *resp = submit_response;
    return grpc::Status::OK;
  }
  grpc::Status GetTask(grpc::ServerContext*, const v1::GetTaskRequest* req,
                       v1::Task* resp) override {
    return Find(req->task_id(), resp);
  }
  grpc::Status ListTasks(grpc::ServerContext*, const v1::ListTasksRequest* req,
                         v1::ListTasksResponse* resp) override {
    std::lock_guard lock(mu);
    last_list = *req;
    for (const auto& [id, t] : tasks) {
      if (!req->status().empty() && t.status() != req->status()) continue;
      v1::Task* s = resp->add_tasks();
      s->set_task_id(id);
      s->set_status(t.status());
      s->set_intent(t.intent());
      s->set_created_at_us(t.created_at_us());
    }
    return grpc::Status::OK;
  }
  grpc::Status CancelTask(grpc::ServerContext*, const v1::CancelTaskRequest* req,
                          v1::Task* resp) override {
    {
      std::lock_guard lock(mu);
      last_cancel = *req;
      if (tasks.count(req->task_id())) tasks[req->task_id()].set_status("CANCELLED");
    }
    return Find(req->task_id(), resp);
  }
  grpc::Status RetryTask(grpc::ServerContext*, const v1::RetryTaskRequest* req,
                         v1::Task* resp) override {
    {
      std::lock_guard lock(mu);
      if (!retry_status.ok()) return retry_status;
    }
    return Find(req->task_id(), resp);
  }
  grpc::Status ListNodes(grpc::ServerContext* ctx, const v1::ListNodesRequest*,
                         v1::ListNodesResponse* resp) override {
    std::lock_guard lock(mu);
    auto auth = ctx->client_metadata().find("authorization");
    last_authorization = auth == ctx->client_metadata().end()
                             ? std::string()
                             : std::string(auth->second.data(), auth->second.size());
    *resp = nodes;
    return grpc::Status::OK;
  }
  grpc::Status TaskEvents(grpc::ServerContext*, const v1::TaskEventsRequest* req,
                          v1::TaskEventsResponse* resp) override {
    std::lock_guard lock(mu);
    auto it = history.find(req->task_id());
    if (it == history.end()) return {grpc::StatusCode::NOT_FOUND, "no such task"};
    *resp = it->second;
    return grpc::Status::OK;
  }
  grpc::Status WatchTask(grpc::ServerContext* ctx, const v1::WatchTaskRequest* req,
                         grpc::ServerWriter<v1::Task>* writer) override {
    std::vector<v1::Task> updates;
    bool hold_open = false;
    {
      std::lock_guard lock(mu);
      if (!tasks.count(req->task_id())) return {grpc::StatusCode::NOT_FOUND, "no such task"};
      updates = watch_updates;
      hold_open = watch_hold_open;
    }
    for (const auto& t : updates) {
      if (!writer->Write(t)) break;
    }
    if (hold_open) {
      // The sync API has no cancellation callback; poll (server side only).
      auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!ctx->IsCancelled() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      std::lock_guard lock(mu);
      watch_cancelled = ctx->IsCancelled();
    }
    return grpc::Status::OK;
  }

  grpc::Status CreateToken(grpc::ServerContext*, const v1::CreateTokenRequest* req,
                           v1::CreateTokenResponse* resp) override {
    std::lock_guard lock(mu);
    last_token_create = *req;
    if (req->name() == "taken") {
      return {grpc::StatusCode::ALREADY_EXISTS, "a token named taken exists"};
    }
    resp->set_name(req->name());
    resp->set_role(req->role());
    resp->set_token("apollo-0123456789abcdef0123456789abcdef0123456789abcdef");
    if (req->ttl_s() > 0) resp->set_expires_at_us(1'712'345'678'000'000 + req->ttl_s() * 1'000'000);
    return grpc::Status::OK;
  }
  grpc::Status ListAudit(grpc::ServerContext*, const v1::ListAuditRequest* req,
                         v1::ListAuditResponse* resp) override {
    std::lock_guard lock(mu);
    last_audit_list = *req;
    *resp = audit;
    return grpc::Status::OK;
  }
  grpc::Status ListAlerts(grpc::ServerContext*, const v1::ListAlertsRequest* req,
                          v1::ListAlertsResponse* resp) override {
    std::lock_guard lock(mu);
    last_alert_list = *req;
    *resp = alerts;
    return grpc::Status::OK;
  }

  grpc::Status ListDeadLetters(grpc::ServerContext*, const v1::ListDeadLettersRequest* req,
                               v1::ListDeadLettersResponse* resp) override {
    std::lock_guard lock(mu);
    last_dlq_list = *req;
    int limit = req->limit() > 0 ? req->limit() : 100;
    for (auto it = letters.upper_bound(req->after_id()); it != letters.end(); ++it) {
      if (resp->letters_size() == limit) {
        resp->set_more(true);
        break;
      }
      *resp->add_letters() = it->second;
    }
    return grpc::Status::OK;
  }
  grpc::Status GetDeadLetter(grpc::ServerContext*, const v1::GetDeadLetterRequest* req,
                             v1::DeadLetter* resp) override {
    std::lock_guard lock(mu);
    auto it = letters.find(req->id());
    if (it == letters.end()) return NoLetter(req->id());
    *resp = it->second;
    return grpc::Status::OK;
  }
  grpc::Status ReplayDeadLetters(grpc::ServerContext*, const v1::ReplayDeadLettersRequest* req,
                                 v1::ReplayDeadLettersResponse* resp) override {
    std::lock_guard lock(mu);
    int replayed = 0;
    for (auto it = letters.begin(); it != letters.end();) {
      bool chosen = req->all() || it->first == req->id();
      if (!chosen || still_poison.count(it->first)) {
        ++it;
        continue;
      }
      it = letters.erase(it);
      ++replayed;
    }
    if (!req->all() && replayed == 0) {
      if (!still_poison.count(req->id())) return NoLetter(req->id());
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "dead letter " + std::to_string(req->id()) +
                  " still cannot be applied: " + still_poison[req->id()]};
    }
    resp->set_replayed(replayed);
    resp->set_remaining(static_cast<int32_t>(letters.size()));
    return grpc::Status::OK;
  }
  grpc::Status DropDeadLetter(grpc::ServerContext*, const v1::DropDeadLetterRequest* req,
                              v1::DropDeadLetterResponse*) override {
    std::lock_guard lock(mu);
    if (letters.erase(req->id()) == 0) return NoLetter(req->id());
    return grpc::Status::OK;
  }
  grpc::Status BusStatus(grpc::ServerContext*, const v1::BusStatusRequest*,
                         v1::BusStatusResponse* resp) override {
    std::lock_guard lock(mu);
    *resp = bus_status;
    resp->set_dead_letters(static_cast<int64_t>(letters.size()));
    return grpc::Status::OK;
  }

 private:
  static grpc::Status NoLetter(int64_t id) {
    return {grpc::StatusCode::NOT_FOUND, "no dead letter " + std::to_string(id)};
  }
  grpc::Status Find(const std::string& id, v1::Task* resp) {
    std::lock_guard lock(mu);
    auto it = tasks.find(id);
    if (it == tasks.end()) return {grpc::StatusCode::NOT_FOUND, "task " + id + " not found"};
    *resp = it->second;
    return grpc::Status::OK;
  }
};

}  // namespace apollo::cli::test_support
