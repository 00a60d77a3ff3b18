#include "client/model-scan.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "core/json-text.h"

namespace nurl::client {

namespace fs = std::filesystem;

namespace {

bool has_suffix(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// A Hugging Face checkpoint: config.json beside at least one .safetensors file.
bool is_checkpoint(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "config.json", ec)) return false;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (has_suffix(e.path().filename().string(), ".safetensors")) return true;
  return false;
}

void scan_store(const fs::path& manifests, std::vector<FoundModel>& out) {
  std::error_code ec;
  if (!fs::is_directory(manifests, ec)) return;
  for (auto it = fs::recursive_directory_iterator(manifests, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_regular_file(ec) || it->path().filename().string().starts_with(".")) continue;
    std::ifstream in(it->path());
    auto j = parse_json(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
    FoundModel m;
    m.kind = FoundModel::Kind::store;
    m.name = m.label = j["name"].get<std::string>();
    if (j.contains("size") && j["size"].is_number_unsigned()) m.size = j["size"].get<uint64_t>();
    if (j.contains("details") && j["details"].is_object()) m.family = j["details"].value("family", "");
    out.push_back(std::move(m));
  }
}

}  // namespace

std::vector<FoundModel> scan_models(const std::string& dir) {
  std::vector<FoundModel> store, files, checkpoints;
  std::error_code ec;
  const fs::path root = fs::absolute(dir, ec).lexically_normal();
  scan_store(root / "manifests", store);
  std::sort(store.begin(), store.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& e : fs::directory_iterator(root, fs::directory_options::skip_permission_denied, ec)) {
    const std::string fname = e.path().filename().string();
    if (fname == "blobs" || fname == "manifests" || fname.starts_with(".")) continue;
    std::error_code e2;
    if (e.is_regular_file(e2) && has_suffix(fname, ".gguf")) {
      FoundModel m;
      m.kind = FoundModel::Kind::gguf;
      m.name = e.path().string();
      m.label = fname;
      m.size = e.file_size(e2);
      files.push_back(std::move(m));
    } else if (e.is_directory(e2) && is_checkpoint(e.path())) {
      FoundModel m;
      m.kind = FoundModel::Kind::checkpoint;
      m.name = e.path().string();
      m.label = fname + "/";
      for (const auto& f : fs::directory_iterator(e.path(), e2))
        if (f.is_regular_file(e2)) m.size += f.file_size(e2);
      checkpoints.push_back(std::move(m));
    }
  }
  auto by_label = [](const auto& a, const auto& b) { return a.label < b.label; };
  std::sort(files.begin(), files.end(), by_label);
  std::sort(checkpoints.begin(), checkpoints.end(), by_label);
  store.insert(store.end(), files.begin(), files.end());
  store.insert(store.end(), checkpoints.begin(), checkpoints.end());
  return store;
}

}  // namespace nurl::client
