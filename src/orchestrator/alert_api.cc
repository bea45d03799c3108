// The operator API's alert list: the store's alert rows (illegal
// transitions, unknown tasks, circuit breakers, queue watermarks, dead
// letters, ...), oldest first, optionally one kind and/or one node. Kept
// apart from api_service.cc; a thin read of StateStore::ListAlerts.
#include <algorithm>

#include "orchestrator/api_service.h"

namespace apollo::orchestrator {
namespace {

// With a filter the store is paged through (it has no filtered query); one
// call examines at most kScanPage * kScanPages rows, then says "more".
constexpr int kScanPage = 1000;
constexpr int kScanPages = 50;

// `webhook`: alerts are delivered (alerts.webhook_url); without one a
// pending row is shown as "off", not as waiting for ever.
void FillAlert(const store::AlertRow& a, bool webhook, apollo::v1::Alert* out) {
  out->set_id(a.id);
  out->set_kind(a.kind);
  out->set_task_id(a.task_id);
  out->set_node_id(a.node_id);
  if (a.from) out->set_from_status(std::string(TaskStateName(*a.from)));
  if (a.to) out->set_to_status(std::string(TaskStateName(*a.to)));
  out->set_event_id(a.event_id);
  out->set_message(a.detail);
  out->set_at_us(ToUnixMicros(a.at));
  out->set_delivery(!webhook && a.delivery == store::AlertDelivery::kPending
                        ? std::string("off")
                        : std::string(store::AlertDeliveryName(a.delivery)));
  out->set_delivery_attempts(a.attempts);
  out->set_delivery_detail(a.delivery_detail);
}

}  // namespace

grpc::Status ApiService::ListAlerts(grpc::ServerContext* ctx,
                                    const apollo::v1::ListAlertsRequest* req,
                                    apollo::v1::ListAlertsResponse* resp) {
  if (grpc::Status a = Allow(*ctx, Role::kViewer, "alert.list"); !a.ok()) return a;
  const int limit = PageLimit(req->limit());
  const bool filtered = !req->kind().empty() || !req->node_id().empty();
  // Unfiltered: one more than asked tells whether there are more.
  const int page = filtered ? kScanPage : limit + 1;
  const int pages = filtered ? kScanPages : 1;
  int64_t after = std::max<int64_t>(0, req->after_id());
  for (int i = 0; i < pages; ++i) {
    auto rows = store_.ListAlerts(after, page);
    if (!rows.ok()) return ToGrpc(rows.status());
    for (const store::AlertRow& a : *rows) {
      if (resp->alerts_size() == limit) {
        resp->set_more(true);
        resp->set_next_after_id(after);
        return grpc::Status::OK;
      }
      after = a.id;
      if (!req->kind().empty() && a.kind != req->kind()) continue;
      if (!req->node_id().empty() && a.node_id != req->node_id()) continue;
      FillAlert(a, orchestrator_.options().alert_webhook, resp->add_alerts());
    }
    if (static_cast<int>(rows->size()) < page) {
      resp->set_next_after_id(after);
      return grpc::Status::OK;
    }
  }
  resp->set_more(true);  // scan bound reached: ask again from next_after_id
  resp->set_next_after_id(after);
  return grpc::Status::OK;
}

}  // namespace apollo::orchestrator
