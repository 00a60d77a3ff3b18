#include "client/context.h"

#include <cstdio>
#include <filesystem>

namespace nurl::client {

void Context::fail(const std::string& msg, int code) {
  std::fprintf(stderr, "Error: %s\n", msg.c_str());
  exit_code = code;
}

nlohmann::json Context::call(const std::string& method, const std::string& path,
                             const std::optional<nlohmann::json>& body) {
  auto r = http->request(method, path, body);
  if (!r.ok()) {
    fail(r.error());
    return nullptr;
  }
  if (r->status >= 300) {
    fail(error_text(*r));
    return nullptr;
  }
  auto j = r->json();
  return j.is_null() ? nlohmann::json::object() : j;
}

std::string Context::model_ref(const std::string& arg) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (arg.size() > 5 && arg.substr(arg.size() - 5) == ".gguf" && fs::is_regular_file(arg, ec))
    return fs::absolute(arg, ec).lexically_normal().string();
  return arg;
}

}  // namespace nurl::client
