#include "routes/resolve.h"

#include <filesystem>

#include "store/store.h"

namespace nurl {

namespace fs = std::filesystem;

Result<void> validate_model_name(const std::string& name) {
  if (name.empty()) return Error(Code::invalid_argument, "model is required");
  if (name.size() > 1024) return Error(Code::invalid_argument, "invalid model name: too long");
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '\\')
      return Error(Code::invalid_argument, "invalid model name: control characters and backslashes are not allowed");
  return ok();
}

bool looks_like_path(const std::string& name) {
  return name.starts_with("/") || name.starts_with("./") || name.starts_with("../") || name.starts_with("~") ||
         name.ends_with(".gguf");
}

namespace {

bool has_dotdot_segment(const std::string& name) {
  size_t i = 0;
  while (i <= name.size()) {
    size_t j = name.find('/', i);
    if (j == std::string::npos) j = name.size();
    if (name.compare(i, j - i, "..") == 0 && j - i == 2) return true;
    i = j + 1;
  }
  return false;
}

}  // namespace

Result<ModelRef> resolve_model(const std::string& name, const http::Peer& peer, bool allow_paths,
                                    const StoreResolver& store) {
  NURL_TRY(validate_model_name(name));
  if (looks_like_path(name)) {
    if (!name.ends_with(".gguf"))
      return Error(Code::invalid_argument, "invalid model name \"" + name + "\": a file path must name a .gguf file");
    if (!(peer.unix_socket || allow_paths))
      return Error(Code::invalid_argument, "invalid model name \"" + name +
                                               "\": file paths are accepted only on the control socket");
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::path(name), ec);
    if (ec || !fs::is_regular_file(p, ec)) return Error(Code::not_found, "model '" + name + "' not found");
    ModelRef m;
    m.name = name;
    m.path = p.string();
    m.modified_at = std::chrono::file_clock::to_sys(fs::last_write_time(p, ec));
    return m;
  }
  if (has_dotdot_segment(name) || name.starts_with("/"))
    return Error(Code::invalid_argument, "invalid model name \"" + name + "\"");
  if (store) return store(name);
  return Error(Code::not_found, "model '" + name + "' not found");
}

StoreResolver store_resolver(const Store& store) {
  return [&store](const std::string& name) -> Result<ModelRef> {
    auto r = store.resolve(std::string_view(name));
    if (!r.ok()) {
      if (r.error().code == Code::not_found) return Error(Code::not_found, "model '" + name + "' not found");
      return r.error();
    }
    ModelRef m;
    m.name = r->manifest.name.display();  // the store's spelling (names are case-insensitive)
    m.path = r->blob_path.string();
    m.template_override = r->manifest.template_text;
    m.system = r->manifest.system;
    m.digest = r->manifest.digest;
    if (!r->manifest.parameters.is_null() && !r->manifest.parameters.empty()) {
      auto opts = api::parse_options(r->manifest.parameters, nullptr);
      if (!opts.ok()) return opts.error().context("model '" + name + "' parameters");
      m.defaults = *opts;
    }
    if (auto t = parse_rfc3339(r->manifest.added_at)) m.modified_at = *t;
    return m;
  };
}

}  // namespace nurl
