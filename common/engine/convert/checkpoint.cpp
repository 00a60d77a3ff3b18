// Checkpoint: config.json + safetensors shards (see checkpoint.h).
#include "engine/convert/checkpoint.h"

#include <algorithm>

namespace nurl::convert {

namespace {

constexpr const char* kIndex = "model.safetensors.index.json";
constexpr size_t kMaxShards = 10000;

bool plain_file_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos &&
         s.find('\\') == std::string::npos && s.find('\0') == std::string::npos;
}

// The shard files: from the index when there is one, else model.safetensors, else every
// *.safetensors in the directory (sorted).
Result<std::vector<std::string>> shard_names(const std::filesystem::path& dir, const JsonDoc* index) {
  std::vector<std::string> names;
  if (index) {
    const Json* map = index->find("weight_map");
    if (!map || !map->is_object()) return Error(Code::corrupt, index->name + ": no \"weight_map\" object");
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (!it->is_string()) return Error(Code::corrupt, index->name + ": weight_map[\"" + it.key() + "\"] is not a file name");
      const std::string f = it->get<std::string>();
      if (!plain_file_name(f))
        return Error(Code::corrupt, index->name + ": weight_map[\"" + it.key() + "\"] = \"" + f +
                                        "\" is not a file name in the checkpoint directory");
      if (std::find(names.begin(), names.end(), f) == names.end()) names.push_back(f);
      if (names.size() > kMaxShards) return Error(Code::corrupt, index->name + ": more than 10000 shards");
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  if (std::filesystem::exists(dir / "model.safetensors")) return std::vector<std::string>{"model.safetensors"};
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".safetensors") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  if (names.empty())
    return Error(Code::not_found, dir.string() + ": no model.safetensors, " + kIndex + " or *.safetensors shards");
  return names;
}

}  // namespace

Result<Checkpoint> Checkpoint::open(const std::filesystem::path& dir) {
  Checkpoint c;
  c.dir_ = dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Error(Code::not_found, dir.string() + ": not a directory");
  auto cfg = JsonDoc::load(dir / "config.json", uint64_t(16) << 20);
  if (!cfg.ok()) return cfg.error().context(dir.string());
  c.config_ = std::move(cfg).value();

  std::optional<JsonDoc> index;
  if (std::filesystem::exists(dir / kIndex)) {
    auto ix = JsonDoc::load(dir / kIndex, uint64_t(64) << 20);
    if (!ix.ok()) return ix.error().context(dir.string());
    index = std::move(ix).value();
  }
  NURL_ASSIGN(std::vector<std::string> names, shard_names(dir, index ? &*index : nullptr));
  for (const auto& n : names) {
    if (!std::filesystem::is_regular_file(dir / n, ec))
      return Error(Code::not_found, dir.string() + ": shard " + n + (index ? " (named by " + std::string(kIndex) + ")" : "") +
                                        " is missing");
    NURL_ASSIGN(auto shard, open_safetensors((dir / n).string()));
    c.weight_bytes_ += shard->map ? shard->map->size() : 0;
    c.shards_.push_back(std::move(shard));
  }
  for (const auto& shard : c.shards_) {
    for (const auto& t : shard->tensors) {
      auto [it, fresh] = c.tensors_.emplace(t.name, TensorRef{shard.get(), &t});
      if (!fresh)
        return Error(Code::corrupt, dir.string() + ": tensor " + t.name + " is in both " + it->second.file->name +
                                        " and " + shard->name);
    }
  }
  if (index) {
    const Json& map = *index->find("weight_map");
    for (auto it = map.begin(); it != map.end(); ++it) {
      auto t = c.tensors_.find(it.key());
      const std::string shard = it->get<std::string>();
      if (t == c.tensors_.end() || t->second.file->name != shard)
        return Error(Code::corrupt, dir.string() + ": " + kIndex + " puts tensor " + it.key() + " in " + shard +
                                        ", which does not hold it");
    }
  }
  return c;
}

TensorRef Checkpoint::find(std::string_view name) const {
  auto it = tensors_.find(std::string(name));
  return it == tensors_.end() ? TensorRef{} : it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> v;
  for (const auto& s : shards_)
    for (const auto& t : s->tensors) v.push_back(t.name);
  return v;
}

}  // namespace nurl::convert
