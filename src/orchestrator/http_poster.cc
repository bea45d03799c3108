#include "orchestrator/http_poster.h"

#include <curl/curl.h>

namespace apollo::orchestrator {
namespace {

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

}  // namespace

Status CurlPoster::Post(const std::string& url, const std::string& json, Duration timeout,
                        const std::vector<std::string>& extra, const std::string& pin) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status::Internal("curl_easy_init failed");
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const std::string& h : extra) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_slist* resolve = pin.empty() ? nullptr : curl_slist_append(nullptr, pin.c_str());
  if (resolve) curl_easy_setopt(curl, CURLOPT_RESOLVE, resolve);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect would skip the check
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, json.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(json.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(
      curl, CURLOPT_TIMEOUT_MS,
      static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  CURLcode rc = curl_easy_perform(curl);
  long code = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(headers);
  curl_slist_free_all(resolve);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) return Status::Unavailable(curl_easy_strerror(rc));
  if (code >= 200 && code < 300) return Status::Ok();
  std::string why = "HTTP " + std::to_string(code);
  return code >= 500 || code == 429 ? Status::Unavailable(why) : Status::FailedPrecondition(why);
}

}  // namespace apollo::orchestrator
