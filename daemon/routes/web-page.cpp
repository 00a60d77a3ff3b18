// The web chat page: "/" for browsers (Accept: text/html) and /assets/NAME, both from the files
// embedded at build time (web/, see web/README.md). The page is sent with a strict
// Content-Security-Policy (scripts and styles from this origin only, no inline code, requests
// to this origin only). Every file has an ETag; the page revalidates (a reload is a 304), and
// assets named with their hash (?v=…, as the page links them) are cached for good.
#include "routes/web.h"

#include "web/assets.h"

namespace nurl {

namespace {

constexpr const char* kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

bool etag_matches(const std::string& if_none_match, std::string_view etag) {
  if (if_none_match.empty()) return false;
  if (if_none_match == "*") return true;
  size_t i = 0;
  while (i < if_none_match.size()) {
    size_t end = if_none_match.find(',', i);
    if (end == std::string::npos) end = if_none_match.size();
    std::string_view t = std::string_view(if_none_match).substr(i, end - i);
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    if (t.starts_with("W/")) t.remove_prefix(2);
    if (t == etag) return true;
    i = end + 1;
  }
  return false;
}

http::Response asset_response(const http::Request& req, const web::Asset& a, const std::string& cache_control) {
  http::Response r;
  r.headers = {{"ETag", std::string(a.etag)},
               {"Cache-Control", cache_control},
               {"X-Content-Type-Options", "nosniff"}};
  if (etag_matches(req.header("if-none-match"), a.etag)) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  r.content_type = std::string(a.content_type);
  r.body = std::string(a.body);
  return r;
}

}  // namespace

bool browser_wants_page(const http::Request& req) { return req.header("accept").find("text/html") != std::string::npos; }

http::Reply web_index(const http::Request& req) {
  const web::Asset* a = web::find_asset("index.html");
  if (!a) return http::error_response(404, "this build has no web chat page");
  http::Response r = asset_response(req, *a, "no-cache");
  r.headers.push_back({"Content-Security-Policy", kCsp});
  r.headers.push_back({"Referrer-Policy", "no-referrer"});
  r.headers.push_back({"X-Frame-Options", "DENY"});
  r.headers.push_back({"Vary", "Accept"});  // "/" answers curl with plain text
  return r;
}

void add_web_page_routes(http::Router& r, RouteContext&) {
  r.add("GET", "/assets/:name", [](const http::Request& req) -> http::Reply {
    const std::string& name = req.params.at("name");
    const web::Asset* a = web::find_asset(name);
    if (!a || name == "index.html") return http::error_response(404, "no asset " + name);
    // The page links every asset with ?v=<its hash>: such a URL never changes content.
    const std::string v = "v=" + std::string(a->etag.substr(1, a->etag.size() - 2));
    const bool versioned = req.query == v;
    return asset_response(req, *a, versioned ? "public, max-age=31536000, immutable" : "no-cache");
  });
}

}  // namespace nurl
