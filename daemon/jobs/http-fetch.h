// One HTTP GET through libcurl, streamed to callbacks: TLS with the system CA store, redirects
// (bounded), HTTPS_PROXY/NO_PROXY from the environment (libcurl reads them), connect timeout and
// a low-speed abort for stalled transfers. No retries here: the pull job decides what to retry.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace nurl {

struct FetchOptions {
  std::vector<std::string> headers;  // extra request headers, "Name: value"
  uint64_t resume_from = 0;          // > 0: "Range: bytes=<resume_from>-"
  std::string if_range;              // with resume_from: "If-Range: <etag>"
  long connect_timeout_s = 20;
  long low_speed_time_s = 60;        // abort when below 1 byte/s for this long
  long max_redirects = 10;
  bool head_only = false;            // a HEAD request
  bool follow_redirects = true;      // false: the first response is the final one (a 302's headers)
};

// The final response's head (after redirects).
struct FetchHead {
  long status = 0;
  bool has_length = false;
  uint64_t content_length = 0;
  bool has_range = false;            // Content-Range: bytes <start>-<end>/<total>
  uint64_t range_start = 0;
  uint64_t range_total = 0;          // 0 when "*"
  std::string etag;
  std::string last_modified;
  // Hugging Face's resolve response (kept across the redirect to the CDN): the LFS file's sha256
  // (X-Linked-Etag, unquoted), its size (X-Linked-Size) and the commit it was served from.
  std::string linked_etag;
  uint64_t linked_size = 0;
  std::string repo_commit;
  std::string url;                   // effective URL
};

struct FetchCallbacks {
  // Once, before the first body byte of the final response (also when there is no body).
  // Return false to abort the transfer.
  std::function<bool(const FetchHead&)> on_head;
  // Body bytes of a 2xx response; false aborts.
  std::function<bool(std::span<const uint8_t>)> on_body;
  // Called periodically; false aborts (cancel).
  std::function<bool()> keep_going;
};

enum class FetchOutcome {
  complete,   // the response ended normally (any status; see head.status)
  aborted,    // a callback returned false
  transient,  // network trouble worth retrying: reset, timeout, stall, short body
  fatal,      // not worth retrying: bad URL, TLS verification failed, too many redirects
};

struct FetchResult {
  FetchOutcome outcome = FetchOutcome::fatal;
  FetchHead head;
  std::string error;       // curl's message for transient/fatal
  std::string error_body;  // the first KiB of a >= 400 response body
};

// Calls curl_global_init / cleanup (reference counted by libcurl); keep one alive while fetching.
class CurlGlobal {
 public:
  CurlGlobal();
  ~CurlGlobal();
  CurlGlobal(const CurlGlobal&) = delete;
  CurlGlobal& operator=(const CurlGlobal&) = delete;
};

FetchResult http_fetch(const std::string& url, const FetchOptions& opt, const FetchCallbacks& cb);

// GET a small text body (an API listing), up to max_bytes. Error on transport failure or >= 400,
// with the status in the message.
struct TextResponse {
  long status = 0;
  std::string body;
};
Result<TextResponse> http_get_text(const std::string& url, const FetchOptions& opt, size_t max_bytes = 16 << 20);

}  // namespace nurl
