#include "orchestrator/http/json_api.h"

#include <google/protobuf/util/json_util.h>

#include <charconv>

#include "orchestrator/access_control.h"

namespace apollo::orchestrator::http {
namespace {

namespace pb = google::protobuf;
using Stub = apollo::v1::Orchestrator::StubInterface;

// One route bound to a typed stub method.
template <typename Req, typename Resp>
Route Bind(std::string method, std::string path, std::string rpc, std::string summary, Body body,
           grpc::Status (Stub::*m)(grpc::ClientContext*, const Req&, Resp*)) {
  Route r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.rpc = std::move(rpc);
  r.summary = std::move(summary);
  r.body = body;
  r.request = Req::descriptor();
  r.response = Resp::descriptor();
  r.call = [m](Stub& stub, grpc::ClientContext* ctx, const pb::Message& req, pb::Message* resp) {
    return (stub.*m)(ctx, static_cast<const Req&>(req), static_cast<Resp*>(resp));
  };
  r.new_request = [] { return std::make_unique<Req>(); };
  r.new_response = [] { return std::make_unique<Resp>(); };
  return r;
}

std::vector<Route> MakeRoutes() {
  using S = Stub;
  return {
      Bind("GET", "/api/v1/tasks", "ListTasks",
           "List tasks, newest first (filters: status, intent, metadata.KEY; paging: limit, "
           "page_token)",
           Body::kNone, &S::ListTasks),
      Bind("POST", "/api/v1/tasks", "SubmitTasks",
           "Submit a task file (application/yaml or application/json body; query: file_name, "
           "dry_run, force)",
           Body::kTaskFile, &S::SubmitTasks),
      Bind("GET", "/api/v1/tasks/{task_id}", "GetTask", "One task with its per-node rows",
           Body::kNone, &S::GetTask),
      Bind("GET", "/api/v1/tasks/{task_id}/events", "TaskEvents",
           "The task's history: every transition with its cause", Body::kNone, &S::TaskEvents),
      Bind("POST", "/api/v1/tasks/{task_id}/cancel", "CancelTask",
           "Cancel the task (body or query: reason)", Body::kJson, &S::CancelTask),
      Bind("POST", "/api/v1/tasks/{task_id}/retry", "RetryTask",
           "Retry the task's failed or timed-out rows", Body::kJson, &S::RetryTask),
      Bind("POST", "/api/v1/tasks/{task_id}/rollout", "ControlRollout",
           "Pause, resume, approve or abort the task's rollout (body: action, reason)", Body::kJson,
           &S::ControlRollout),
      Bind("GET", "/api/v1/nodes", "ListNodes", "Nodes with liveness, mode and labels", Body::kNone,
           &S::ListNodes),
      Bind("GET", "/api/v1/alerts", "ListAlerts",
           "Alerts by id (paging: after_id, limit; filters: kind, node_id)", Body::kNone,
           &S::ListAlerts),
      Bind("GET", "/api/v1/dead-letters", "ListDeadLetters",
           "Dead-lettered events by id (paging: after_id, limit)", Body::kNone,
           &S::ListDeadLetters),
      Bind("GET", "/api/v1/dead-letters/{id}", "GetDeadLetter", "One dead letter", Body::kNone,
           &S::GetDeadLetter),
      Bind("POST", "/api/v1/dead-letters/replay", "ReplayDeadLetters",
           "Replay one letter (id) or every letter (all=true)", Body::kJson, &S::ReplayDeadLetters),
      Bind("POST", "/api/v1/dead-letters/{id}/drop", "DropDeadLetter",
           "Give up on a letter (applied as is, then removed)", Body::kJson, &S::DropDeadLetter),
      Bind("GET", "/api/v1/bus", "BusStatus", "The event bus: backend and per-partition lag",
           Body::kNone, &S::BusStatus),
      Bind("GET", "/api/v1/cluster", "ClusterStatus",
           "Orchestrator replicas and the leader lease (epoch, expiry)", Body::kNone,
           &S::ClusterStatus),
      Bind("GET", "/api/v1/intents", "ListIntents",
           "Circuit breakers per intent, the dispatch queue and the retry budget", Body::kNone,
           &S::ListIntents),
      Bind("GET", "/api/v1/whoami", "WhoAmI",
           "The caller: its token's name and role, and whether tokens are required", Body::kNone,
           &S::WhoAmI),
  };
}

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

pb::util::JsonPrintOptions PrintOptions() {
  pb::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  return o;
}

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool IsJson(const std::string& content_type) {
  return content_type.rfind("application/json", 0) == 0;
}

// 400 with each problem of a rejected task file.
ApiResponse Rejected(const apollo::v1::SubmitTasksResponse& resp) {
  nlohmann::json problems = nlohmann::json::array();
  std::string first;
  for (const auto& d : resp.errors()) {
    nlohmann::json p = {
        {"file", d.file()}, {"line", d.line()}, {"column", d.column()}, {"message", d.message()}};
    if (d.has_task_index()) p["task_index"] = d.task_index();
    problems.push_back(std::move(p));
    if (first.empty()) {
      first = d.file() + ":" + std::to_string(d.line()) + ":" + std::to_string(d.column()) + ": " +
              d.message();
    }
  }
  nlohmann::json j = ErrorJson(StatusCode::kInvalidArgument,
                               std::to_string(resp.errors_size()) +
                                   " problem(s) in the task file, nothing was stored; the "
                                   "first: " +
                                   first);
  j["error"]["problems"] = std::move(problems);
  return {400, Dump(j)};
}

}  // namespace

std::string MessageJson(const pb::Message& m) {
  std::string out;
  if (!pb::util::MessageToJsonString(m, &out, PrintOptions()).ok()) return "{}";
  return out;
}

const std::vector<Route>& JsonApiRoutes() {
  static const std::vector<Route> routes = MakeRoutes();
  return routes;
}

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kUnknown:
    case StatusCode::kInternal:
    case StatusCode::kDataLoss:
      return 500;
  }
  return 500;
}

nlohmann::json ErrorJson(StatusCode code, const std::string& message) {
  return {{"error", {{"code", std::string(StatusCodeName(code))}, {"message", message}}}};
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ApiResponse ErrorResponse(StatusCode code, const std::string& message) {
  return {HttpStatusOf(code), Dump(ErrorJson(code, message))};
}

Status SetField(const std::string& name, const std::string& value, pb::Message* msg) {
  const pb::Descriptor* d = msg->GetDescriptor();
  const pb::Reflection* r = msg->GetReflection();
  std::string field_name = name;
  std::string map_key;
  if (size_t dot = name.find('.'); dot != std::string::npos) {
    field_name = name.substr(0, dot);
    map_key = name.substr(dot + 1);
  }
  const pb::FieldDescriptor* f = d->FindFieldByName(field_name);
  auto bad = [&](const std::string& what) {
    return Status::InvalidArgument("parameter '" + name + "': " + what);
  };
  if (!f) {
    std::string names;
    for (int i = 0; i < d->field_count(); ++i) {
      const pb::FieldDescriptor* g = d->field(i);
      if (g->message_type() && !g->is_map()) continue;
      names += (names.empty() ? "" : ", ") + g->name() + (g->is_map() ? ".KEY" : "");
    }
    return Status::InvalidArgument("unknown parameter '" + name +
                                   "' (expected one of: " + (names.empty() ? "none" : names) + ")");
  }
  if (f->is_map()) {
    if (map_key.empty()) return bad("a map: write " + field_name + ".KEY=VALUE");
    pb::Message* entry = r->AddMessage(msg, f);
    entry->GetReflection()->SetString(entry, f->message_type()->map_key(), map_key);
    entry->GetReflection()->SetString(entry, f->message_type()->map_value(), value);
    return Status::Ok();
  }
  if (!map_key.empty()) return bad("not a map");
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      rep ? r->AddString(msg, f, value) : r->SetString(msg, f, value);
      return Status::Ok();
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      if (value != "true" && value != "false" && value != "1" && value != "0") {
        return bad("expected true or false, got '" + value + "'");
      }
      bool b = value == "true" || value == "1";
      rep ? r->AddBool(msg, f, b) : r->SetBool(msg, f, b);
      return Status::Ok();
    }
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      int32_t v = 0;
      if (!ParseNumber(value, &v)) return bad("expected a 32-bit integer, got '" + value + "'");
      rep ? r->AddInt32(msg, f, v) : r->SetInt32(msg, f, v);
      return Status::Ok();
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      int64_t v = 0;
      if (!ParseNumber(value, &v)) return bad("expected an integer, got '" + value + "'");
      rep ? r->AddInt64(msg, f, v) : r->SetInt64(msg, f, v);
      return Status::Ok();
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v = 0;
      if (!ParseNumber(value, &v))
        return bad("expected a non-negative integer, got '" + value + "'");
      rep ? r->AddUInt32(msg, f, v) : r->SetUInt32(msg, f, v);
      return Status::Ok();
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v = 0;
      if (!ParseNumber(value, &v))
        return bad("expected a non-negative integer, got '" + value + "'");
      rep ? r->AddUInt64(msg, f, v) : r->SetUInt64(msg, f, v);
      return Status::Ok();
    }
    default:
      return bad("cannot be given in the query string (send a JSON body)");
  }
}

Status FillFromQuery(const std::multimap<std::string, std::string>& query, pb::Message* msg) {
  for (const auto& [name, value] : query) APOLLO_RETURN_IF_ERROR(SetField(name, value, msg));
  return Status::Ok();
}

const Route* JsonApi::Match(const std::string& method, const std::string& path,
                            std::map<std::string, std::string>* params, bool* path_matched) {
  const std::vector<std::string> parts = Split(path);
  *path_matched = false;
  for (const Route& r : JsonApiRoutes()) {
    const std::vector<std::string> pattern = Split(r.path);
    if (pattern.size() != parts.size()) continue;
    std::map<std::string, std::string> got;
    bool ok = true;
    for (size_t i = 0; i < parts.size() && ok; ++i) {
      const std::string& p = pattern[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
        ok = !parts[i].empty();
        got[p.substr(1, p.size() - 2)] = parts[i];
      } else {
        ok = p == parts[i];
      }
    }
    if (!ok) continue;
    if (r.method != method) {
      *path_matched = true;
      continue;
    }
    *params = std::move(got);
    return &r;
  }
  return nullptr;
}

ApiResponse JsonApi::Handle(const ApiRequest& req) const {
  std::map<std::string, std::string> params;
  bool path_matched = false;
  const Route* route = Match(req.method, req.path, &params, &path_matched);
  if (!route) {
    if (path_matched) {
      ApiResponse r =
          ErrorResponse(StatusCode::kUnimplemented, req.method + " is not served on " + req.path);
      r.status = 405;
      return r;
    }
    return ErrorResponse(StatusCode::kNotFound, "no route " + req.method + " " + req.path +
                                                    " (the routes are in /api/v1/openapi.json)");
  }
  return Call(*route, params, req);
}

ApiResponse JsonApi::Call(const Route& route, const std::map<std::string, std::string>& params,
                          const ApiRequest& req) const {
  std::unique_ptr<pb::Message> request = route.new_request();
  if (route.body == Body::kTaskFile) {
    if (req.body.empty()) {
      return ErrorResponse(StatusCode::kInvalidArgument,
                           "the body is empty: send a task file (application/yaml or "
                           "application/json)");
    }
    auto* submit = static_cast<apollo::v1::SubmitTasksRequest*>(request.get());
    submit->set_file_name("request-body");
    submit->set_content(req.body);
  } else if (route.body == Body::kJson && !req.body.empty()) {
    if (!IsJson(req.content_type)) {
      return ErrorResponse(StatusCode::kInvalidArgument,
                           "the body must be application/json (got '" + req.content_type + "')");
    }
    pb::util::JsonParseOptions o;
    if (auto s = pb::util::JsonStringToMessage(req.body, request.get(), o); !s.ok()) {
      return ErrorResponse(
          StatusCode::kInvalidArgument,
          "the body is not a " + route.request->name() + ": " + std::string(s.message()));
    }
  }
  if (Status s = FillFromQuery(req.query, request.get()); !s.ok()) {
    return ErrorResponse(s.code(), s.message());
  }
  for (const auto& [name, value] : params) {
    if (Status s = SetField(name, value, request.get()); !s.ok()) {
      return ErrorResponse(s.code(), s.message());
    }
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline_);
  if (!req.bearer_token.empty()) ctx.AddMetadata("authorization", "Bearer " + req.bearer_token);
  if (!req.peer.empty()) ctx.AddMetadata(kHttpClientKey, req.peer);
  std::unique_ptr<pb::Message> response = route.new_response();
  grpc::Status s = route.call(*stub_, &ctx, *request, response.get());
  if (!s.ok()) {
    return ErrorResponse(static_cast<StatusCode>(s.error_code()), s.error_message());
  }
  if (route.body == Body::kTaskFile) {
    const auto& submitted = static_cast<const apollo::v1::SubmitTasksResponse&>(*response);
    if (submitted.errors_size() > 0) return Rejected(submitted);
    const auto& sreq = static_cast<const apollo::v1::SubmitTasksRequest&>(*request);
    return {sreq.dry_run() ? 200 : 201, MessageJson(*response)};
  }
  return {200, MessageJson(*response)};
}

}  // namespace apollo::orchestrator::http
