// The web chat's files, embedded into the binary at build time (web/embed.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace nurl::web {

struct Asset {
  std::string_view name;          // "index.html", "app.js", ...
  std::string_view content_type;
  std::string_view body;
  std::string_view etag;          // "\"<16 hex digits of SHA-256>\""
};

const std::vector<Asset>& assets();
const Asset* find_asset(std::string_view name);

}  // namespace nurl::web
