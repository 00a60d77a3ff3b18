// libcurl easy-handle wrapper (see http-fetch.h). Header lines are parsed as they arrive; a new
// status line (after a redirect or a 100 Continue) resets the head, so on_head sees the final one.
#include "jobs/http-fetch.h"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>

namespace nurl {

CurlGlobal::CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
CurlGlobal::~CurlGlobal() { curl_global_cleanup(); }

namespace {

struct Transfer {
  const FetchCallbacks* cb = nullptr;
  CURL* curl = nullptr;
  FetchResult res;
  bool head_sent = false;
  bool aborted = false;

  bool deliver_head() {
    if (head_sent) return true;
    head_sent = true;
    char* eff = nullptr;
    if (curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff) res.head.url = eff;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &res.head.status);
    if (cb->on_head && !cb->on_head(res.head)) aborted = true;
    return !aborted;
  }
};

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    FetchHead fresh;  // a new response in the chain: only the hub's linked facts carry over
    fresh.linked_etag = std::move(t->res.head.linked_etag);
    fresh.linked_size = t->res.head.linked_size;
    fresh.repo_commit = std::move(t->res.head.repo_commit);
    t->res.head = std::move(fresh);
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string key = line.substr(0, colon);
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  std::string value = trim(line.substr(colon + 1));
  FetchHead& h = t->res.head;
  if (key == "content-length") {
    h.has_length = true;
    h.content_length = std::strtoull(value.c_str(), nullptr, 10);
  } else if (key == "etag") {
    h.etag = value;
  } else if (key == "last-modified") {
    h.last_modified = value;
  } else if (key == "x-linked-etag") {
    h.linked_etag = value.size() >= 2 && value.front() == '"' && value.back() == '"' ? value.substr(1, value.size() - 2)
                                                                                       : value;
  } else if (key == "x-linked-size") {
    h.linked_size = std::strtoull(value.c_str(), nullptr, 10);
  } else if (key == "x-repo-commit") {
    h.repo_commit = value;
  } else if (key == "content-range" && value.rfind("bytes ", 0) == 0) {
    h.has_range = true;
    h.range_start = std::strtoull(value.c_str() + 6, nullptr, 10);
    size_t slash = value.find('/');
    h.range_total = slash == std::string::npos ? 0 : std::strtoull(value.c_str() + slash + 1, nullptr, 10);
  }
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t bytes = size * n;
  if (!t->deliver_head()) return 0;
  if (t->res.head.status >= 300) {
    if (t->res.error_body.size() < 1024) t->res.error_body.append(data, std::min<size_t>(bytes, 1024));
    return bytes;
  }
  if (t->cb->on_body && !t->cb->on_body({reinterpret_cast<const uint8_t*>(data), bytes})) {
    t->aborted = true;
    return 0;
  }
  return bytes;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->cb->keep_going && !t->cb->keep_going()) {
    t->aborted = true;
    return 1;
  }
  return 0;
}

bool is_transient(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

}  // namespace

FetchResult http_fetch(const std::string& url, const FetchOptions& opt, const FetchCallbacks& cb) {
  Transfer t;
  t.cb = &cb;
  t.curl = curl_easy_init();
  if (!t.curl) {
    t.res.error = "curl_easy_init failed";
    return t.res;
  }
  char errbuf[CURL_ERROR_SIZE] = {};
  curl_slist* hdrs = nullptr;
  for (const auto& h : opt.headers) hdrs = curl_slist_append(hdrs, h.c_str());
  if (opt.resume_from > 0 && !opt.if_range.empty())
    hdrs = curl_slist_append(hdrs, ("If-Range: " + opt.if_range).c_str());
  std::string range = opt.resume_from > 0 ? std::to_string(opt.resume_from) + "-" : "";

  CURL* c = t.curl;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, opt.follow_redirects ? 1L : 0L);
  if (opt.head_only) curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, opt.max_redirects);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, opt.connect_timeout_s);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, opt.low_speed_time_s);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "nurllama");
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 512L * 1024);
  if (hdrs) curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
  if (!range.empty()) curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);

  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) t.deliver_head();  // responses without a body (416, empty files)
  if (t.aborted) t.res.outcome = FetchOutcome::aborted;
  else if (rc == CURLE_OK) t.res.outcome = FetchOutcome::complete;
  else {
    if (!t.head_sent) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.res.head.status);
    t.res.outcome = is_transient(rc) ? FetchOutcome::transient : FetchOutcome::fatal;
    t.res.error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  }
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(c);
  return t.res;
}

Result<TextResponse> http_get_text(const std::string& url, const FetchOptions& opt, size_t max_bytes) {
  TextResponse out;
  bool too_big = false;
  FetchCallbacks cb;
  cb.on_body = [&](std::span<const uint8_t> b) {
    if (out.body.size() + b.size() > max_bytes) {
      too_big = true;
      return false;
    }
    out.body.append(reinterpret_cast<const char*>(b.data()), b.size());
    return true;
  };
  FetchResult r = http_fetch(url, opt, cb);
  out.status = r.head.status;
  if (too_big) return Error(Code::io, url + ": response larger than " + std::to_string(max_bytes) + " bytes");
  if (r.outcome != FetchOutcome::complete) return Error(Code::io, url + ": " + r.error);
  if (out.status >= 300) out.body = r.error_body;
  return out;
}

}  // namespace nurl
