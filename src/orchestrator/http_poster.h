#pragma once

// The HTTP seam of the notifiers (task callbacks, alert webhooks): one JSON
// POST. libcurl in production, a fake in unit tests.
//
// Thread-safety: CurlPoster is stateless; Post may run on many threads.

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace apollo::orchestrator {

class HttpPoster {
 public:
  virtual ~HttpPoster() = default;
  // POSTs `json` to `url` with Content-Type: application/json and the
  // `headers` ("Name: value" lines). OK only for a 2xx answer; otherwise
  // Unavailable (connection, timeout, 5xx, 429: worth retrying) or
  // FailedPrecondition (another 4xx) with the reason. `pin` non-empty
  // ("host:port:address"): connect to that address, no name lookup.
  virtual Status Post(const std::string& url, const std::string& json, Duration timeout,
                      const std::vector<std::string>& headers, const std::string& pin) = 0;
};

// libcurl (http and https only). The binary calls curl_global_init once in
// main().
class CurlPoster final : public HttpPoster {
 public:
  Status Post(const std::string& url, const std::string& json, Duration timeout,
              const std::vector<std::string>& headers, const std::string& pin) override;
};

}  // namespace apollo::orchestrator
