#include "orchestrator/callback_target.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace apollo::orchestrator {
namespace {

bool InternalV4(uint32_t a) {  // host byte order
  auto in = [a](uint32_t net, int bits) {
    uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
    return (a & mask) == net;
  };
  return in(0x00000000, 8) ||   // 0.0.0.0/8 "this network"
         in(0x0A000000, 8) ||   // 10/8
         in(0x64400000, 10) ||  // 100.64/10 carrier-grade NAT
         in(0x7F000000, 8) ||   // 127/8 loopback
         in(0xA9FE0000, 16) ||  // 169.254/16 link-local, cloud metadata
         in(0xAC100000, 12) ||  // 172.16/12
         in(0xC0000000, 24) ||  // 192.0.0/24 protocol assignments
         in(0xC0A80000, 16) ||  // 192.168/16
         in(0xC6120000, 15) ||  // 198.18/15 benchmarking
         in(0xE0000000, 4) ||   // 224/4 multicast
         in(0xF0000000, 4);     // 240/4 reserved, broadcast
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string AddressText(const sockaddr* addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof buf);
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, buf, sizeof buf);
  }
  return buf;
}

}  // namespace

bool IsInternalAddress(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    return InternalV4(ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr));
  }
  if (addr->sa_family != AF_INET6) return true;
  const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
  const uint8_t* b = a.s6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a)) {
    uint32_t v4 =
        (uint32_t{b[12]} << 24) | (uint32_t{b[13]} << 16) | (uint32_t{b[14]} << 8) | b[15];
    return InternalV4(v4);
  }
  return IN6_IS_ADDR_UNSPECIFIED(&a) || IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_LINKLOCAL(&a) ||
         IN6_IS_ADDR_SITELOCAL(&a) || IN6_IS_ADDR_MULTICAST(&a) ||
         (b[0] & 0xFE) == 0xFC;  // fc00::/7 unique local
}

Result<CallbackTarget> ParseCallbackUrl(const std::string& url) {
  std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> u(curl_url(), &curl_url_cleanup);
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument("callback_url '" + url + "' is not a URL");
  }
  auto part = [&u](CURLUPart what, unsigned flags = 0) -> std::string {
    char* p = nullptr;
    if (curl_url_get(u.get(), what, &p, flags) != CURLUE_OK || p == nullptr) return "";
    std::string s(p);
    curl_free(p);
    return s;
  };
  std::string scheme = Lower(part(CURLUPART_SCHEME));
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("callback_url '" + url + "': only http and https");
  }
  CallbackTarget t;
  t.host = Lower(part(CURLUPART_HOST));
  t.port = std::atoi(part(CURLUPART_PORT, CURLU_DEFAULT_PORT).c_str());
  if (t.host.empty() || t.port <= 0) {
    return Status::InvalidArgument("callback_url '" + url + "' has no host");
  }
  return t;
}

Result<CallbackTarget> CheckCallbackTarget(const std::string& url,
                                           const std::vector<std::string>& allowed_hosts) {
  Result<CallbackTarget> parsed = ParseCallbackUrl(url);
  if (!parsed.ok()) return parsed.status();
  CallbackTarget t = std::move(*parsed);
  std::string bare = t.host;  // an IPv6 literal comes in brackets
  if (bare.size() > 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  for (const std::string& a : allowed_hosts) {
    if (Lower(a) == t.host || Lower(a) == bare) return t;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(bare.c_str(), nullptr, &hints, &res); rc != 0) {
    return Status::Unavailable("callback host '" + t.host +
                               "' does not resolve: " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(res, &freeaddrinfo);
  std::string first;
  for (const addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    if (IsInternalAddress(ai->ai_addr)) {
      return Status::PermissionDenied(
          "callback host '" + t.host + "' is " + AddressText(ai->ai_addr) +
          ", an internal address (loopback, private, link-local or reserved); list the host in "
          "callbacks.allowed_hosts to allow it");
    }
    if (first.empty()) first = AddressText(ai->ai_addr);
  }
  if (first.empty()) return Status::Unavailable("callback host '" + t.host + "' has no address");
  bool v6 = first.find(':') != std::string::npos;
  t.pin = bare + ":" + std::to_string(t.port) + ":" + (v6 ? "[" + first + "]" : first);
  return t;
}

std::string FailureClass(const Status& s) {
  const std::string& m = s.message();
  if (m.rfind("HTTP ", 0) == 0 && m.size() >= 6) return std::string("HTTP ") + m[5] + "xx";
  if (m.find("imeout") != std::string::npos || m.find("timed out") != std::string::npos) {
    return "timed out";
  }
  return "connection failed";
}

}  // namespace apollo::orchestrator
