#pragma once

// The OpenAPI 3.0 document of the HTTP server, served at
// /api/v1/openapi.json. Made from the route table (json_api.h) and the
// api.proto descriptors, so a route and its schema cannot drift apart; the
// e2e test http_api_test.sh calls every documented operation on a running
// server and checks none is unknown to it, and that unknown paths are.
//
// Thread-safety: a pure function.

#include <nlohmann/json.hpp>

namespace apollo::orchestrator::http {

nlohmann::json OpenApiDocument();

}  // namespace apollo::orchestrator::http
