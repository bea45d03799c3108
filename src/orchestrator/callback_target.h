#pragma once

// Where a task's callback_url may point. A callback is a request the center
// makes on behalf of whoever submitted the task, so it must not reach what
// only the center can reach: loopback, private, link-local (cloud metadata
// at 169.254.169.254), unique-local, multicast and reserved addresses are
// refused unless the host is listed in `callbacks.allowed_hosts`. The name
// is resolved once, every address it resolves to is checked, and the POST
// is pinned to the checked address (no second lookup a DNS answer could
// change in between).
//
// Thread-safety: pure functions (CheckCallbackTarget resolves the name).

#include <netinet/in.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace apollo::orchestrator {

struct CallbackTarget {
  std::string host;
  int port = 0;
  // For CURLOPT_RESOLVE ("host:port:address"); empty for an allowed host
  // (resolved by the POST itself).
  std::string pin;
};

// True for an address a callback must not reach by default (IPv4 and IPv6,
// IPv4-mapped IPv6 judged as IPv4).
bool IsInternalAddress(const sockaddr* addr);

// The host (lowercase) and port (the scheme's default when absent) of an
// http(s) URL, without resolving anything (`pin` empty); InvalidArgument
// for anything else.
Result<CallbackTarget> ParseCallbackUrl(const std::string& url);

// OK with the target to POST to; InvalidArgument for a URL that is not
// http(s)://host[:port]/...; PermissionDenied naming the address and the
// setting for an internal one; Unavailable when the name does not resolve.
Result<CallbackTarget> CheckCallbackTarget(const std::string& url,
                                           const std::vector<std::string>& allowed_hosts);

// "HTTP 5xx", "HTTP 4xx", "timed out", "connection failed": what a
// callback's history row says of a failure (never the raw error, which
// would make the history an oracle for scanning the center's network).
std::string FailureClass(const Status& s);

}  // namespace apollo::orchestrator
