// Store implementation: manifests and blobs on disk, with GC by reference scan (see store.h).
#include "store/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>
#include <vector>

#include "core/json-text.h"
#include "store/fs-util.h"
#include "store/sha256.h"

namespace nurl {

namespace fs = std::filesystem;

BlobPin& BlobPin::operator=(BlobPin&& o) noexcept {
  if (this != &o) {
    if (store_) store_->unpin(digest_);
    store_ = o.store_;
    digest_ = std::move(o.digest_);
    o.store_ = nullptr;
  }
  return *this;
}

BlobPin::~BlobPin() {
  if (store_) store_->unpin(digest_);
}

Result<StoreLayout> StoreLayout::from_env(const std::function<const char*(const char*)>& getenv) {
  auto env = [&](const char* k) -> std::string {
    const char* v = getenv(k);
    return v ? std::string(v) : std::string();
  };
  StoreLayout l;
  if (auto h = env("NURLLAMA_HOME"); !h.empty()) l.home = h;
  else if (auto s = env("STATE_DIRECTORY"); !s.empty()) l.home = s.substr(0, s.find(':'));
  else if (auto home = env("HOME"); !home.empty()) l.home = fs::path(home) / ".nurllama";
  else
    return Error(Code::invalid_argument,
                 "cannot place the model store: neither NURLLAMA_HOME nor HOME is set");
  if (auto m = env("NURLLAMA_MODELS"); !m.empty()) l.models = m;
  else if (auto o = env("OLLAMA_MODELS"); !o.empty()) l.models = o;
  else l.models = l.home / "models";
  return l;
}

namespace {

bool is_temp_name(const fs::path& p) {
  return p.filename().string().rfind(std::string(kTempPrefix), 0) == 0;
}

void remove_stray_temps(const fs::path& dir, bool recursive) {
  std::error_code ec;
  if (recursive) {
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file() && is_temp_name(it->path())) fs::remove(it->path(), ec);
    }
  } else {
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && is_temp_name(it->path())) fs::remove(it->path(), ec);
    }
  }
}

// Copies src into a new temp file in `dir`, hashing as it goes; returns {temp path, digest}.
Result<std::pair<fs::path, std::string>> copy_hashing(const fs::path& src, const fs::path& dir) {
  int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return errno_error(errno, "opening", src);
  posix_fadvise(in, 0, 0, POSIX_FADV_SEQUENTIAL);
  auto tmp = temp_path_in(dir);
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    int e = errno;
    ::close(in);
    return errno_error(e, "creating", tmp);
  }
  Sha256 h;
  std::vector<uint8_t> buf(1 << 20);
  Result<void> r;
  for (;;) {
    ssize_t n = ::read(in, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      r = errno_error(errno, "reading", src);
      break;
    }
    if (n == 0) break;
    h.update({buf.data(), size_t(n)});
    r = write_all(out, buf.data(), size_t(n), tmp);
    if (!r.ok()) break;
  }
  if (r.ok()) r = fsync_fd(out, tmp);
  ::close(in);
  ::close(out);
  if (!r.ok()) {
    ::unlink(tmp.c_str());
    return r.error();
  }
  return std::make_pair(tmp, h.finish());
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(StoreLayout layout) {
  NURL_TRY(make_dirs(layout.blobs()));
  NURL_TRY(make_dirs(layout.manifests()));
  remove_stray_temps(layout.blobs(), false);
  remove_stray_temps(layout.manifests(), true);
  return std::unique_ptr<Store>(new Store(std::move(layout)));
}

fs::path Store::manifest_file(const ModelName& name) const {
  return layout_.manifests() / name.manifest_path();
}

namespace {

bool iequals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

ModelName Store::stored_name(const ModelName& name) const {
  std::error_code ec;
  if (fs::is_regular_file(manifest_file(name), ec)) return name;
  std::string* parts[4];
  ModelName found = name;
  parts[0] = &found.host, parts[1] = &found.ns, parts[2] = &found.model, parts[3] = &found.tag;
  fs::path dir = layout_.manifests();
  for (std::string* part : parts) {
    bool hit = false;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::string f = it->path().filename().string();
      if (iequals(f, *part)) {
        *part = f;
        dir = it->path();
        hit = true;
        break;
      }
    }
    if (!hit) return name;
  }
  return fs::is_regular_file(dir, ec) ? found : name;
}

fs::path Store::blob_path(const std::string& digest) const {
  auto hex = digest_hex(digest);
  NURL_ASSERT(hex.ok());
  return layout_.blobs() / ("sha256-" + (hex.ok() ? *hex : std::string("invalid")));
}

bool Store::has_blob(const std::string& digest) const {
  if (!digest_hex(digest).ok()) return false;
  std::error_code ec;
  return fs::is_regular_file(blob_path(digest), ec);
}

BlobPin Store::pin(const std::string& digest) {
  std::lock_guard lk(mu_);
  ++pins_[digest];
  return BlobPin(this, digest);
}

void Store::unpin(const std::string& digest) {
  std::lock_guard lk(mu_);
  auto it = pins_.find(digest);
  if (it != pins_.end() && --it->second == 0) pins_.erase(it);
}

Result<Manifest> Store::read_manifest(const ModelName& asked) const {
  const ModelName name = stored_name(asked);
  auto path = manifest_file(name);
  auto text = read_small_file(path);
  if (!text.ok()) {
    if (text.error().code == Code::not_found)
      return Error(Code::not_found, "model \"" + name.display() + "\" not found, try pulling it first");
    return text.error();
  }
  auto j = parse_json(*text);
  if (j.is_discarded()) return Error(Code::corrupt, "manifest " + path.string() + ": not valid JSON");
  NURL_ASSIGN(Manifest m, manifest_from_json(j, path.string()));
  m.name = name;  // the path is the truth (the file may have been copied by hand)
  return m;
}

Result<ResolvedModel> Store::resolve(std::string_view name) const {
  NURL_ASSIGN(ModelName n, parse_model_name(name));
  return resolve(n);
}

Result<ResolvedModel> Store::resolve(const ModelName& name) const {
  NURL_ASSIGN(Manifest m, read_manifest(name));
  auto blob = blob_path(m.digest);
  struct stat st {};
  std::string hint = ": run `nurllama verify " + name.display() + "` or pull it again";
  if (::stat(blob.c_str(), &st) != 0)
    return Error(Code::corrupt, "model " + name.display() + ": blob " + blob.string() + " is missing" + hint);
  if (uint64_t(st.st_size) != m.size)
    return Error(Code::corrupt, "model " + name.display() + ": blob " + blob.string() + " has " +
                                    std::to_string(st.st_size) + " bytes, the manifest says " +
                                    std::to_string(m.size) + hint);
  if (auto h = check_gguf_header(blob); !h.ok())
    return Error(Code::corrupt, "model " + name.display() + ": " + h.error().msg + hint);
  return ResolvedModel{std::move(m), std::move(blob)};
}

std::vector<Manifest> Store::list(std::vector<std::string>* problems) const {
  std::vector<Manifest> out;
  std::error_code ec;
  const fs::path root = layout_.manifests();
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().filename().string().front() == '.') continue;
    auto rel = it->path().lexically_relative(root);
    std::vector<std::string> parts(rel.begin(), rel.end());
    if (parts.size() != 4) {
      if (problems) problems->push_back(it->path().string() + ": not at host/namespace/model/tag");
      continue;
    }
    auto name = parse_model_name(parts[0] + "/" + parts[1] + "/" + parts[2] + ":" + parts[3]);
    if (!name.ok() || name->manifest_path() != rel.string()) {
      if (problems) problems->push_back(it->path().string() + ": not a valid model name");
      continue;
    }
    auto m = read_manifest(*name);
    if (!m.ok()) {
      if (problems) problems->push_back(m.error().msg);
      continue;
    }
    out.push_back(std::move(*m));
  }
  std::sort(out.begin(), out.end(),
            [](const Manifest& a, const Manifest& b) { return a.name.display() < b.name.display(); });
  return out;
}

Result<void> Store::commit_blob(const fs::path& file, const std::string& digest) {
  NURL_TRY(digest_hex(digest));
  return rename_durable(file, blob_path(digest));
}

Result<std::string> Store::import_file(const fs::path& file, ImportMode mode) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return errno_error(errno, "reading", file);
  if (!S_ISREG(st.st_mode)) return Error(Code::invalid_argument, file.string() + ": not a regular file");
  if (mode == ImportMode::link_or_copy) {
    auto tmp = temp_path_in(layout_.blobs());
    if (::link(file.c_str(), tmp.c_str()) == 0) {
      auto h = hash_file(tmp);
      if (!h.ok()) {
        ::unlink(tmp.c_str());
        return h.error();
      }
      if (auto r = commit_blob(tmp, h->digest); !r.ok()) {
        ::unlink(tmp.c_str());
        return r.error();
      }
      return h->digest;
    }
    // EXDEV (other filesystem), EPERM (protected hard links), ...: fall back to a copy.
  }
  NURL_ASSIGN(auto copied, copy_hashing(file, layout_.blobs()));
  if (auto r = commit_blob(copied.first, copied.second); !r.ok()) {
    ::unlink(copied.first.c_str());
    return r.error();
  }
  return copied.second;
}

Result<Manifest> Store::create(const ModelName& name, const fs::path& gguf, CreateOptions opt) {
  NURL_TRY(check_gguf_header(gguf));
  NURL_ASSIGN(std::string digest, import_file(gguf, opt.mode));
  if (opt.source.empty()) opt.source = fs::absolute(gguf).string();
  auto m = create_from_blob(name, digest, std::move(opt));
  if (!m.ok()) {
    std::lock_guard lk(mu_);
    collect_if_unreferenced_locked(digest);
  }
  return m;
}

Result<Manifest> Store::create_from_blob(const ModelName& name, const std::string& digest, CreateOptions opt) {
  NURL_TRY(digest_hex(digest));
  BlobPin keep = pin(digest);
  if (!has_blob(digest)) return Error(Code::not_found, "blob " + digest + " is not in the store");
  auto blob = blob_path(digest);
  auto details = read_model_details(blob);
  if (!details.ok()) return details.error().context("adding " + name.display());
  struct stat st {};
  if (::stat(blob.c_str(), &st) != 0) return errno_error(errno, "reading", blob);
  Manifest m;
  m.name = name;
  m.source = opt.source;
  m.digest = digest;
  m.size = uint64_t(st.st_size);
  m.added_at = now_rfc3339();
  m.details = std::move(*details);
  m.system = std::move(opt.system);
  m.template_text = std::move(opt.template_text);
  m.parameters = opt.parameters.is_object() ? std::move(opt.parameters) : nlohmann::json::object();
  m.validators = opt.validators.is_object() ? std::move(opt.validators) : nlohmann::json::object();
  NURL_TRY(put_manifest(m));
  return m;
}

Result<void> Store::put_manifest(const Manifest& m) {
  std::lock_guard lk(mu_);
  if (!has_blob(m.digest)) return Error(Code::not_found, "blob " + m.digest + " is not in the store");
  auto old = read_manifest(m.name);
  NURL_TRY(write_file_atomic(manifest_file(m.name), dump_json(manifest_to_json(m), 2) + "\n"));
  // The same name in another case: the new spelling replaces it.
  if (old.ok() && !(old->name == m.name)) (void)remove_manifest_file(manifest_file(old->name));
  if (old.ok() && old->digest != m.digest) collect_if_unreferenced_locked(old->digest);
  return ok();
}

Result<Manifest> Store::copy(const ModelName& from, const ModelName& to) {
  NURL_ASSIGN(Manifest m, read_manifest(from));
  if (!has_blob(m.digest))
    return Error(Code::corrupt, "model " + from.display() + ": blob " + m.digest + " is missing");
  m.name = to;
  m.added_at = now_rfc3339();
  NURL_TRY(put_manifest(m));
  return m;
}

Result<void> Store::remove(const ModelName& name) {
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Manifest m, read_manifest(name));
  NURL_TRY(remove_manifest_file(manifest_file(m.name)));
  collect_if_unreferenced_locked(m.digest);
  return ok();
}

Result<void> Store::remove_manifest_file(const fs::path& file) {
  if (::unlink(file.c_str()) != 0) return errno_error(errno, "removing", file);
  NURL_TRY(fsync_dir(file.parent_path()));
  // Drop now-empty model/namespace/host directories (rmdir fails harmlessly when not empty).
  for (auto dir = file.parent_path(); dir != layout_.manifests() && ::rmdir(dir.c_str()) == 0;)
    dir = dir.parent_path();
  return ok();
}

void Store::collect_if_unreferenced_locked(const std::string& digest) {
  if (pins_.count(digest)) return;
  for (const auto& m : list())
    if (m.digest == digest) return;
  auto blob = blob_path(digest);
  if (::unlink(blob.c_str()) == 0) (void)fsync_dir(blob.parent_path());
}

void Store::release_blob(const std::string& digest) {
  if (!digest_hex(digest).ok()) return;
  std::lock_guard lk(mu_);
  collect_if_unreferenced_locked(digest);
}

size_t Store::collect_garbage() {
  std::lock_guard lk(mu_);
  std::set<std::string> referenced;
  for (const auto& m : list()) referenced.insert(m.digest);
  size_t removed = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(layout_.blobs(), ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    std::string f = it->path().filename().string();
    if (f.rfind("sha256-", 0) != 0) continue;
    std::string digest = "sha256:" + f.substr(7);
    if (!digest_hex(digest).ok() || referenced.count(digest) || pins_.count(digest)) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  if (removed) (void)fsync_dir(layout_.blobs());
  return removed;
}

Result<VerifyReport> Store::verify(const ModelName& name, const std::function<bool(uint64_t)>& on_progress) const {
  NURL_ASSIGN(Manifest m, read_manifest(name));
  VerifyReport r;
  r.name = m.name.display();
  r.expected_digest = m.digest;
  r.expected_size = m.size;
  auto h = hash_file(blob_path(m.digest), on_progress);
  if (!h.ok()) {
    if (h.error().code == Code::not_found) return r;  // missing blob: actual digest empty, size 0
    return h.error();
  }
  r.actual_digest = h->digest;
  r.actual_size = h->size;
  return r;
}

}  // namespace nurl
