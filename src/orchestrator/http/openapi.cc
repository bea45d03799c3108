#include "orchestrator/http/openapi.h"

#include <google/protobuf/descriptor.h>

#include <cctype>
#include <set>

#include "core/version.h"
#include "orchestrator/http/json_api.h"

namespace apollo::orchestrator::http {
namespace {

namespace pb = google::protobuf;
using nlohmann::json;

json Ref(const pb::Descriptor* d) { return {{"$ref", "#/components/schemas/" + d->name()}}; }

// The JSON schema of one field's value in protobuf's JSON mapping.
json ValueSchema(const pb::FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return f->type() == pb::FieldDescriptor::TYPE_BYTES
                 ? json{{"type", "string"}, {"format", "byte"}}
                 : json{{"type", "string"}};
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return {{"type", "boolean"}};
    case pb::FieldDescriptor::CPPTYPE_INT32:
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return {{"type", "integer"}, {"format", "int32"}};
    case pb::FieldDescriptor::CPPTYPE_INT64:
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      // The JSON mapping writes 64-bit integers as strings.
      return {{"type", "string"}, {"format", "int64"}};
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return {{"type", "number"}};
    case pb::FieldDescriptor::CPPTYPE_ENUM:
      return {{"type", "string"}};
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return Ref(f->message_type());
  }
  return json::object();
}

json FieldSchema(const pb::FieldDescriptor* f) {
  if (f->is_map()) {
    return {{"type", "object"},
            {"additionalProperties", ValueSchema(f->message_type()->map_value())}};
  }
  if (f->is_repeated()) return {{"type", "array"}, {"items", ValueSchema(f)}};
  return ValueSchema(f);
}

// Adds the schema of `d` and of every message it uses.
void AddSchema(const pb::Descriptor* d, json& schemas) {
  if (schemas.contains(d->name())) return;
  json props = json::object();
  schemas[d->name()] = json::object();  // mark first: recursive messages
  std::vector<const pb::Descriptor*> nested;
  for (int i = 0; i < d->field_count(); ++i) {
    const pb::FieldDescriptor* f = d->field(i);
    props[f->name()] = FieldSchema(f);
    if (f->is_map() && f->message_type()->map_value()->message_type()) {
      nested.push_back(f->message_type()->map_value()->message_type());
    } else if (!f->is_map() && f->message_type()) {
      nested.push_back(f->message_type());
    }
  }
  schemas[d->name()] = {{"type", "object"}, {"properties", props}};
  for (const pb::Descriptor* n : nested) AddSchema(n, schemas);
}

json ErrorResponses() {
  json e = {
      {"description", "An error: {\"error\": {\"code\", \"message\"}}"},
      {"content", {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
  return {{"default", e}};
}

// The query parameters of a route: the request's fields not in the path.
json Parameters(const Route& r) {
  json params = json::array();
  std::set<std::string> in_path;
  for (size_t i = r.path.find('{'); i != std::string::npos; i = r.path.find('{', i + 1)) {
    std::string name = r.path.substr(i + 1, r.path.find('}', i) - i - 1);
    in_path.insert(name);
    params.push_back({{"name", name},
                      {"in", "path"},
                      {"required", true},
                      {"schema", ValueSchema(r.request->FindFieldByName(name))}});
  }
  for (int i = 0; i < r.request->field_count(); ++i) {
    const pb::FieldDescriptor* f = r.request->field(i);
    if (in_path.count(f->name())) continue;
    if (r.body == Body::kTaskFile && f->name() != "file_name" && f->name() != "dry_run" &&
        f->name() != "force") {
      continue;  // the body is the task file
    }
    if (f->is_map()) {
      params.push_back({{"name", f->name() + ".KEY"},
                        {"in", "query"},
                        {"description", "one per key: " + f->name() + ".KEY=VALUE"},
                        {"schema", {{"type", "string"}}}});
    } else if (!f->message_type()) {
      params.push_back({{"name", f->name()}, {"in", "query"}, {"schema", FieldSchema(f)}});
    }
  }
  return params;
}

json Operation(const Route& r, json& schemas) {
  AddSchema(r.response, schemas);
  json op = {{"operationId", r.rpc},
             {"summary", r.summary},
             {"description", "Calls apollo.v1.Orchestrator/" + r.rpc + " (api.proto)."},
             {"parameters", Parameters(r)},
             {"responses", ErrorResponses()}};
  const std::string ok = r.body == Body::kTaskFile ? "201" : "200";
  op["responses"][ok] = {{"description", r.response->name()},
                         {"content", {{"application/json", {{"schema", Ref(r.response)}}}}}};
  if (r.body == Body::kTaskFile) {
    op["responses"]["200"] = op["responses"][ok];
    op["responses"]["200"]["description"] = "dry_run: what would be stored";
    op["requestBody"] = {{"required", true},
                         {"description",
                          "A task file (docs/task-file.md); its problems come back as a 400 with "
                          "error.problems[] (file, line, column, message)"},
                         {"content",
                          {{"application/yaml", {{"schema", {{"type", "string"}}}}},
                           {"application/json", {{"schema", {{"type", "object"}}}}}}}};
  } else if (r.body == Body::kJson) {
    AddSchema(r.request, schemas);
    op["requestBody"] = {{"required", false},
                         {"content", {{"application/json", {{"schema", Ref(r.request)}}}}}};
  }
  return op;
}

json PlainGet(const std::string& summary, const std::string& type, bool secured) {
  json op = {
      {"summary", summary},
      {"responses",
       {{"200",
         {{"description", "OK"}, {"content", {{type, {{"schema", {{"type", "string"}}}}}}}}}}}};
  if (!secured) op["security"] = json::array();
  return op;
}

}  // namespace

json OpenApiDocument() {
  json schemas = {
      {"Error",
       {{"type", "object"},
        {"properties",
         {{"error",
           {{"type", "object"},
            {"properties",
             {{"code", {{"type", "string"}, {"description", "the gRPC code's name"}}},
              {"message", {{"type", "string"}}},
              {"problems", {{"type", "array"}, {"items", {{"type", "object"}}}}}}}}}}}}}};
  json paths = json::object();
  for (const Route& r : JsonApiRoutes()) {
    std::string method = r.method;
    for (char& c : method) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    paths[r.path][method] = Operation(r, schemas);
  }
  paths["/healthz"]["get"] = PlainGet("The process is up", "text/plain", false);
  paths["/readyz"]["get"] =
      PlainGet("Ready: the store answers and the bus is healthy (503 with a JSON reason otherwise)",
               "application/json", false);
  paths["/metrics"]["get"] =
      PlainGet("Prometheus text format (docs/operations.md lists the metrics)", "text/plain", true);
  paths["/api/v1/openapi.json"]["get"] = PlainGet("This document", "application/json", false);
  AddSchema(apollo::v1::Task::descriptor(), schemas);
  json stream = PlainGet(
      "Task changes as Server-Sent Events (viewer): 'event: task' with a Task as data after each "
      "change, 'event: resync' when changes were dropped (re-read the list), ': keepalive' "
      "every few seconds; calls apollo.v1.Orchestrator/WatchTasks",
      "text/event-stream", true);
  stream["operationId"] = "WatchTasks";
  stream["parameters"] =
      json::array({{{"name", "task_id"},
                    {"in", "query"},
                    {"description", "only this task (its state now, then each change)"},
                    {"schema", {{"type", "string"}}}}});
  stream["responses"]["default"] = ErrorResponses()["default"];
  paths["/api/v1/stream"]["get"] = std::move(stream);
  return {{"openapi", "3.0.3"},
          {"info",
           {{"title", "Apollo-11 orchestrator HTTP API"},
            {"version", kVersion},
            {"description",
             "JSON API v1: the operator gRPC API (proto/apollo/v1/api.proto) in protobuf's JSON "
             "mapping. With operator tokens on, send Authorization: Bearer TOKEN; reads need "
             "viewer, submit/cancel/retry operator, dead-letter replay/drop admin."}}},
          {"paths", paths},
          {"components",
           {{"schemas", schemas},
            {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
          {"security", json::array({{{"bearer", json::array()}}})}};
}

}  // namespace apollo::orchestrator::http
