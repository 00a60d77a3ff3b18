// The pull kind (see pull.h): plan, the Hugging Face file choice, the re-pull check, and the
// download → verify → blob → manifest sequence. The transfer itself is download.cpp.
#include "jobs/pull.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "api/json-fields.h"
#include "core/json-text.h"
#include "jobs/download.h"
#include "jobs/http-fetch.h"
#include "store/fs-util.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string hf_auth_hint(const PullConfig& cfg) {
  return cfg.hf_token.empty()
             ? " (the repository may be gated or private: accept its terms on Hugging Face and set HF_TOKEN "
               "for the daemon)"
             : " (HF_TOKEN was sent but has no access to this repository)";
}

}  // namespace

PullConfig PullConfig::from_env(const std::function<const char*(const char*)>& getenv) {
  PullConfig c;
  if (const char* e = getenv("HF_ENDPOINT"); e && *e) c.hf_endpoint = e;
  while (!c.hf_endpoint.empty() && c.hf_endpoint.back() == '/') c.hf_endpoint.pop_back();
  if (const char* t = getenv("HF_TOKEN"); t && *t) c.hf_token = t;
  return c;
}

Result<PullPlan> plan_pull(const PullRequest& req) {
  const std::string& s = req.source;
  PullPlan p;
  auto derive_name = [&](const std::string& file) -> Result<ModelName> {
    if (!req.name.empty()) return parse_model_name(req.name);
    std::string stem = fs::path(file).stem().string();
    return parse_model_name(sanitize_model_segment(stem));
  };
  if (s.rfind("http://", 0) == 0 || s.rfind("https://", 0) == 0) {
    if (s.find_first_of(" \r\n\t") != std::string::npos)
      return Error(Code::invalid_argument, "invalid URL \"" + s + "\"");
    p.kind = PullPlan::Kind::url;
    p.url = s;
    p.key = s;
    std::string path = s.substr(0, s.find_first_of("?#"));
    NURL_ASSIGN(p.name, derive_name(path.substr(path.rfind('/') + 1)));
    return p;
  }
  if (s.rfind("./", 0) == 0 || s.rfind("../", 0) == 0 || s.rfind("/", 0) == 0 || s.rfind("~/", 0) == 0) {
    p.kind = PullPlan::Kind::local;
    p.local = fs::absolute(s).lexically_normal();
    p.key = "file:" + p.local.string();
    NURL_ASSIGN(p.name, derive_name(p.local.filename().string()));
    return p;
  }
  NURL_ASSIGN(ModelName n, parse_model_name(s));
  if (!n.is_hf())
    return Error(Code::unsupported, "cannot pull \"" + s + "\": only hf.co/ORG/REPO[:QUANT], hf.co/ORG/REPO/FILE.gguf, "
                                    "http(s) URLs and local .gguf paths are supported (the ollama registry is not)");
  p.kind = PullPlan::Kind::hf;
  p.hf = n;
  p.key = n.display();
  if (!req.name.empty()) {
    NURL_ASSIGN(p.name, parse_model_name(req.name));
  } else {
    p.name = n;
  }
  return p;
}

Result<HfFile> choose_hf_file(const nlohmann::json& listing, const std::string& quant, const std::string& repo) {
  if (!listing.is_array()) return Error(Code::corrupt, repo + ": unexpected file listing from Hugging Face");
  std::vector<HfFile> ggufs;
  for (const auto& e : listing) {
    if (!e.is_object() || jf::str(e, "type") != "file") continue;
    std::string path = jf::str(e, "path");
    std::string l = lower(path);
    if (l.size() < 5 || l.substr(l.size() - 5) != ".gguf" || l.find("mmproj") != std::string::npos) continue;
    HfFile f{path, jf::u64(e, "size"), ""};
    if (auto lfs = e.find("lfs"); lfs != e.end() && lfs->is_object()) {
      std::string oid = jf::str(*lfs, "oid");
      if (oid.size() == 64) f.digest = "sha256:" + oid;
      f.size = jf::u64(*lfs, "size", f.size);
    }
    ggufs.push_back(f);
  }
  if (ggufs.empty()) return Error(Code::not_found, repo + ": the repository has no .gguf files");
  auto pick = [&](const std::string& q) -> const HfFile* {
    const HfFile* best = nullptr;
    std::string lq = lower(q);
    for (const auto& f : ggufs) {
      std::string l = lower(f.path);
      size_t p = l.find(lq);
      if (p == std::string::npos) continue;
      // The quant must stand alone: "q4_k" must not match "q4_k_m".
      char after = p + lq.size() < l.size() ? l[p + lq.size()] : '.';
      char before = p > 0 ? l[p - 1] : '-';
      if (std::isalnum(static_cast<unsigned char>(after)) || after == '_') continue;
      if (std::isalnum(static_cast<unsigned char>(before))) continue;
      if (!best || f.path.size() < best->path.size()) best = &f;
    }
    return best;
  };
  const HfFile* f = nullptr;
  if (quant == "latest") {
    for (const char* q : {"Q4_K_M", "Q4_0", "Q8_0"})
      if ((f = pick(q))) break;
    if (!f) f = &ggufs.front();
  } else {
    f = pick(quant);
  }
  if (!f) {
    std::string have;
    for (const auto& g : ggufs) have += (have.empty() ? "" : ", ") + g.path;
    return Error(Code::not_found, repo + ": no .gguf file for quant " + quant + " (files: " + have + ")");
  }
  if (lower(f->path).find("-of-0") != std::string::npos)
    return Error(Code::unsupported, repo + ": " + f->path + " is one shard of a split model; split GGUFs are not supported");
  return *f;
}


namespace {

// The copy of this model already in the store from the same source: what a re-pull compares
// against. None when the name is free, came from elsewhere, or its blob is damaged.
std::optional<Manifest> existing_copy(const Store& store, const PullPlan& plan, const std::string& source) {
  auto r = store.resolve(plan.name);
  if (!r.ok() || r->manifest.source != source) return std::nullopt;
  return r->manifest;
}

// The source has not changed: keep the model, refresh what we learned about the source.
void up_to_date(JobContext& ctx, Manifest m, const nlohmann::json& learned) {
  ctx.job.emit({"up to date", m.digest, 0, 0, "checking"});
  nlohmann::json v = m.validators;
  for (auto& [k, val] : learned.items())
    if (k != "url" && !(val.is_string() && val.get<std::string>().empty())) v[k] = val;
  if (v != m.validators) {
    m.validators = v;
    if (auto r = ctx.store.put_manifest(m); !r.ok()) ctx.log.warn("pull " + ctx.job.id() + ": " + r.error().msg);
  }
  succeed_job(ctx);
}

// Hugging Face names the LFS file's sha256 in the resolve response (before its redirect to the
// CDN): a HEAD that does not follow the redirect answers "changed?" for one request.
std::optional<nlohmann::json> hf_head(const std::string& url, const std::vector<std::string>& headers,
                                      const PullConfig& cfg) {
  FetchOptions opt;
  opt.headers = headers;
  opt.head_only = true;
  opt.follow_redirects = false;
  opt.connect_timeout_s = cfg.connect_timeout_s;
  opt.low_speed_time_s = cfg.low_speed_time_s;
  FetchResult r = http_fetch(url, opt, {});
  if (r.outcome != FetchOutcome::complete || r.head.status >= 400 || r.head.linked_etag.empty()) return std::nullopt;
  nlohmann::json v = {{"linked_etag", r.head.linked_etag}};
  if (!r.head.repo_commit.empty()) v["repo_commit"] = r.head.repo_commit;
  if (r.head.linked_size) v["size"] = r.head.linked_size;
  return v;
}

void run_pull(JobContext& ctx, const PullConfig& cfg, const PullPlan& plan) {
  Job& job = ctx.job;
  job.set_state(JobState::running);
  ctx.persist();
  job.emit({"pulling manifest", "", 0, 0, "resolving"});

  if (plan.kind == PullPlan::Kind::local) {
    CreateOptions opt;
    opt.source = plan.local.string();
    job.emit({"copying " + plan.local.filename().string(), "", 0, 0, "importing"});
    auto m = ctx.store.create(plan.name, plan.local, opt);
    if (!m.ok()) return fail_job(ctx, m.error().msg);
    job.emit({"writing manifest", "", 0, 0, "importing"});
    return succeed_job(ctx);
  }

  std::string url = plan.url;
  std::vector<std::string> headers;
  std::string expected_digest;
  uint64_t expected_size = 0;
  bool to_hf = plan.kind == PullPlan::Kind::hf || url.rfind(cfg.hf_endpoint + "/", 0) == 0;
  if (to_hf && !cfg.hf_token.empty()) headers.push_back("Authorization: Bearer " + cfg.hf_token);
  const std::string source = plan.kind == PullPlan::Kind::hf ? plan.hf.display() : url;
  const std::optional<Manifest> existing = existing_copy(ctx.store, plan, source);

  if (plan.kind == PullPlan::Kind::hf) {
    const ModelName& r = plan.hf;
    std::string file = r.tag;
    if (!r.is_hf_file()) {
      FetchOptions opt;
      opt.headers = headers;
      opt.connect_timeout_s = cfg.connect_timeout_s;
      opt.low_speed_time_s = cfg.low_speed_time_s;
      std::string api = cfg.hf_endpoint + "/api/models/" + r.ns + "/" + r.model + "/tree/main";
      auto listing = http_get_text(api, opt);
      if (!listing.ok()) return fail_job(ctx, listing.error().msg);
      if (listing->status == 401 || listing->status == 403)
        return fail_job(ctx, "hf.co/" + r.ns + "/" + r.model + ": access denied (" +
                                 std::to_string(listing->status) + ")" + hf_auth_hint(cfg));
      if (listing->status == 404)
        return fail_job(ctx, "hf.co/" + r.ns + "/" + r.model + ": repository not found (404)" + hf_auth_hint(cfg));
      if (listing->status != 200) return fail_job(ctx, api + ": HTTP " + std::to_string(listing->status));
      auto j = parse_json(listing->body);
      auto f = choose_hf_file(j, r.tag, "hf.co/" + r.ns + "/" + r.model);
      if (!f.ok()) return fail_job(ctx, f.error().msg);
      file = f->path;
      expected_digest = f->digest;
      expected_size = f->size;
    }
    url = cfg.hf_endpoint + "/" + r.ns + "/" + r.model + "/resolve/main/" + file;
    if (existing && !expected_digest.empty() && existing->digest == expected_digest)
      return up_to_date(ctx, *existing, {{"linked_etag", expected_digest.substr(7)}, {"size", expected_size}});
    if (existing && expected_digest.empty()) {
      if (auto v = hf_head(url, headers, cfg); v && "sha256:" + v->value("linked_etag", "") == existing->digest)
        return up_to_date(ctx, *existing, *v);
    }
  }

  Sha256 key_hash;
  key_hash.update(plan.key);
  std::string key_hex = key_hash.finish().substr(7, 16);
  DownloadSpec spec;
  spec.url = url;
  spec.headers = headers;
  spec.part = ctx.store.layout().blobs() / (key_hex + ".part");
  spec.expected_size = expected_size;
  spec.label_digest = expected_digest.empty() ? "sha256:" + key_hex : expected_digest;
  if (existing) spec.validators = existing->validators;
  if (to_hf) spec.auth_hint = hf_auth_hint(cfg);
  const fs::path& part = spec.part;

  auto got = download(spec, cfg, job, ctx.log);
  if (!got.ok()) {
    if (got.error().code == Code::cancelled) {
      if (!job.discard_requested()) return;  // daemon shutdown: resume later
      ::unlink(part.c_str());
      return cancel_job(ctx);
    }
    return fail_job(ctx, got.error().msg);
  }
  if (got->unchanged) return up_to_date(ctx, *existing, got->validators);

  job.emit({"verifying sha256 digest", "", 0, 0, "verifying"});
  if (!expected_digest.empty() && got->digest != expected_digest) {
    ::unlink(part.c_str());
    return fail_job(ctx, url + ": digest mismatch: got " + got->digest + ", the repository says " + expected_digest +
                             " (the download was corrupted; pull again)");
  }
  if (auto h = check_gguf_header(part); !h.ok()) {
    ::unlink(part.c_str());
    return fail_job(ctx, url + ": " + h.error().msg);
  }
  {
    // fsync the part before it becomes a blob.
    int fd = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      auto r = fsync_fd(fd, part);
      ::close(fd);
      if (!r.ok()) return fail_job(ctx, r.error().msg);
    }
  }
  BlobPin pin = ctx.store.pin(got->digest);
  if (auto r = ctx.store.commit_blob(part, got->digest); !r.ok()) return fail_job(ctx, r.error().msg);

  job.emit({"writing manifest", "", 0, 0, "importing"});
  CreateOptions opt;
  opt.source = source;
  opt.validators = got->validators;
  if (existing) {  // a re-pull keeps what the user set on the model
    opt.system = existing->system;
    opt.template_text = existing->template_text;
    opt.parameters = existing->parameters;
  }
  auto m = ctx.store.create_from_blob(plan.name, got->digest, opt);
  pin = BlobPin();
  if (!m.ok()) {
    ctx.store.release_blob(got->digest);
    return fail_job(ctx, m.error().msg);
  }
  succeed_job(ctx);
}

class PullKind : public JobKind {
 public:
  explicit PullKind(PullConfig cfg) : cfg_(std::move(cfg)) {}
  std::string name() const override { return "pull"; }
  bool heavy() const override { return false; }

  Result<JobPlan> plan(const nlohmann::json& request) const override {
    PullRequest req{jf::str(request, "source"), jf::str(request, "name")};
    NURL_ASSIGN(PullPlan p, plan_pull(req));
    return JobPlan{p.key, p.name.display(), {{"source", req.source}, {"name", req.name}}};
  }

  void run(JobContext& ctx) const override {
    PullRequest req{jf::str(ctx.request, "source"), jf::str(ctx.request, "name")};
    auto p = plan_pull(req);
    if (!p.ok()) return fail_job(ctx, p.error().msg);
    ctx.log.info("pull " + ctx.job.id() + ": " + p->key + " -> " + p->name.display());
    run_pull(ctx, cfg_, *p);
  }

 private:
  const PullConfig cfg_;
};

}  // namespace

std::unique_ptr<JobKind> make_pull_kind(PullConfig cfg) { return std::make_unique<PullKind>(std::move(cfg)); }

}  // namespace nurl
