#pragma once

// JSON API v1: the operator gRPC API (apollo.v1.Orchestrator) over HTTP.
//
// Each route calls the gRPC method itself, through an in-process channel to
// the orchestrator's own gRPC server: the same handler, the same access
// check (the request's `Authorization: Bearer TOKEN` travels as the call's
// metadata), the same audit row, the same errors. Requests and responses
// are the api.proto messages in protobuf's canonical JSON mapping, with the
// proto's field names (snake_case) and every field present (int64 values
// are JSON strings, as that mapping says).
//
// A route's request message is filled from, in order: a JSON body
// (POST, application/json, the request message's JSON), the query string
// (one parameter per scalar field, `metadata.KEY=VALUE` for a map, a
// repeated field by repeating it) and the path parameters. POST
// /api/v1/tasks is the exception: its body is a task file (YAML, or JSON,
// which is YAML too), as `apollo-cli task submit --file`.
//
// Errors: {"error": {"code": "NOT_FOUND", "message": "..."}} with the
// gRPC code's name and an HTTP status after grpc-gateway's table; a task
// file's problems also list each as {"file","line","column","message"}
// under error.problems (400).
//
// Thread-safety: the route table is immutable; handlers run on the HTTP
// server's threads and share the (thread-safe) stub.

#include <google/protobuf/message.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apollo/v1/api.grpc.pb.h"
#include "core/status.h"

namespace apollo::orchestrator::http {

// Where a route's request body comes from.
enum class Body { kNone, kJson, kTaskFile };

struct Route {
  std::string method;  // "GET" or "POST"
  std::string path;    // OpenAPI form: /api/v1/tasks/{task_id}
  std::string rpc;     // the apollo.v1.Orchestrator method it calls
  std::string summary;
  Body body = Body::kNone;
  const google::protobuf::Descriptor* request = nullptr;
  const google::protobuf::Descriptor* response = nullptr;
  // Calls the RPC on `stub`.
  std::function<grpc::Status(apollo::v1::Orchestrator::StubInterface& stub,
                             grpc::ClientContext* ctx, const google::protobuf::Message& req,
                             google::protobuf::Message* resp)>
      call;
  std::function<std::unique_ptr<google::protobuf::Message>()> new_request;
  std::function<std::unique_ptr<google::protobuf::Message>()> new_response;
};

// Every JSON API route, in the order the OpenAPI document lists them.
const std::vector<Route>& JsonApiRoutes();

// A request as the API handler sees it (independent of the HTTP library).
struct ApiRequest {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> query;
  std::string content_type;
  std::string body;
  std::string bearer_token;  // from Authorization: Bearer ...; empty if none
  std::string peer;          // "http:ADDR:PORT", for the audit trail
};

struct ApiResponse {
  int status = 200;
  std::string body;  // JSON
};

// The HTTP status of a gRPC code (grpc-gateway's mapping).
int HttpStatusOf(StatusCode code);
// {"error": {"code": NAME, "message": MESSAGE}}.
nlohmann::json ErrorJson(StatusCode code, const std::string& message);
ApiResponse ErrorResponse(StatusCode code, const std::string& message);
// j as text; invalid UTF-8 (from a task file, a store row) becomes U+FFFD
// instead of an exception.
std::string Dump(const nlohmann::json& j);
// `m` in the API's JSON (the mapping above), on one line.
std::string MessageJson(const google::protobuf::Message& m);

// Serves the JSON API with `stub`; `deadline` bounds each call.
class JsonApi {
 public:
  JsonApi(std::unique_ptr<apollo::v1::Orchestrator::StubInterface> stub,
          std::chrono::milliseconds deadline)
      : stub_(std::move(stub)), deadline_(deadline) {}

  // The route `path` (the concrete path of a request) matches, with its
  // path parameters; nullptr if none matches `method` and `path`.
  // `path_matched` says whether the path matched under another method.
  static const Route* Match(const std::string& method, const std::string& path,
                            std::map<std::string, std::string>* params, bool* path_matched);

  ApiResponse Handle(const ApiRequest& req) const;

 private:
  ApiResponse Call(const Route& route, const std::map<std::string, std::string>& params,
                   const ApiRequest& req) const;

  std::unique_ptr<apollo::v1::Orchestrator::StubInterface> stub_;
  std::chrono::milliseconds deadline_;
};

// Fills `msg` from query parameters (see above). InvalidArgument naming the
// parameter for an unknown name or a value of the wrong type.
Status FillFromQuery(const std::multimap<std::string, std::string>& query,
                     google::protobuf::Message* msg);
// Sets one field by name from its text (path parameters too).
Status SetField(const std::string& name, const std::string& value, google::protobuf::Message* msg);

}  // namespace apollo::orchestrator::http
