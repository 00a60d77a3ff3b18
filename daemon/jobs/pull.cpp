// Pull job body (see pull.h). The download loop keeps three facts in step: the bytes in the
// .part file, `have` (their count) and `hash` (their SHA-256 so far). Any response that does not
// continue exactly at `have` truncates the part and restarts all three at zero.
#include "jobs/pull.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "store/fs-util.h"
#include "store/sha256.h"

namespace nurl {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool sleep_unless_stopped(const Job& job, std::chrono::milliseconds d) {
  auto until = Clock::now() + d;
  while (Clock::now() < until) {
    if (job.stop_requested()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !job.stop_requested();
}

std::string hf_auth_hint(const PullConfig& cfg) {
  return cfg.hf_token.empty()
             ? " (the repository may be gated or private: accept its terms on Hugging Face and set HF_TOKEN "
               "for the daemon)"
             : " (HF_TOKEN was sent but has no access to this repository)";
}

// Failure classes of one download: the loop retries transient ones.
struct Outcome {
  enum Kind { done, retry, restart, fatal, stopped } kind = done;
  std::string error;
};

class Download {
 public:
  Download(PullContext& ctx, const PullPlan& plan, std::string url, std::vector<std::string> headers,
           fs::path part, uint64_t expected_size)
      : ctx_(ctx), plan_(plan), url_(std::move(url)), headers_(std::move(headers)), part_(std::move(part)),
        expected_size_(expected_size) {}
  ~Download() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Returns the digest of the complete part file, or an error (code cancelled when stopped).
  Result<std::string> run(const std::string& label_digest) {
    fd_ = ::open(part_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return errno_error(errno, "creating", part_);
    ctx_.job.emit({"pulling " + label_digest.substr(label_digest.find(':') + 1, 12), label_digest,
                   expected_size_, 0});
    // Resume: re-hash what an earlier attempt (or daemon) left, as a stream.
    auto prior = hash_file_into(hash_, part_, [&](uint64_t n) {
      ctx_.job.progress(n, expected_size_);
      return !ctx_.job.stop_requested();
    });
    if (!prior.ok()) return prior.error();
    have_ = *prior;
    if (::lseek(fd_, 0, SEEK_END) < 0) return errno_error(errno, "seeking", part_);
    if (have_ > 0) ctx_.log.info("pull " + ctx_.job.id() + ": resuming at byte " + std::to_string(have_));

    int failures = 0;
    uint64_t best = have_;
    std::chrono::milliseconds delay = ctx_.cfg.backoff;
    for (int attempt = 0; attempt < 1000; ++attempt) {  // bounded: failures cap it far earlier
      Outcome o = attempt_once();
      if (o.kind == Outcome::done) return hash_.finish();
      if (o.kind == Outcome::stopped) return Error(Code::cancelled, "pull stopped");
      if (o.kind == Outcome::fatal) return Error(Code::io, o.error);
      if (o.kind == Outcome::restart) {
        NURL_TRY(truncate_restart());
      }
      if (have_ > best) {  // progress: the failure budget starts again
        best = have_;
        failures = 0;
        delay = ctx_.cfg.backoff;
      }
      if (++failures >= ctx_.cfg.max_attempts)
        return Error(Code::io, "download of " + url_ + " failed " + std::to_string(failures) +
                                   " times in a row, last: " + o.error + " (pull again to resume)");
      ctx_.log.warn("pull " + ctx_.job.id() + ": " + o.error + "; retrying in " + std::to_string(delay.count()) +
                    " ms");
      if (!sleep_unless_stopped(ctx_.job, delay)) return Error(Code::cancelled, "pull stopped");
      delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(30));
    }
    return Error(Code::io, "download of " + url_ + " did not finish");
  }

  uint64_t size() const { return have_; }

 private:
  Result<void> truncate_restart() {
    if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) return errno_error(errno, "truncating", part_);
    hash_.reset();
    have_ = 0;
    magic_.clear();
    return ok();
  }

  Outcome attempt_once() {
    FetchOptions opt;
    opt.headers = headers_;
    opt.resume_from = have_;
    opt.connect_timeout_s = ctx_.cfg.connect_timeout_s;
    opt.low_speed_time_s = ctx_.cfg.low_speed_time_s;
    opt.max_redirects = ctx_.cfg.max_redirects;
    Outcome fail;  // set by callbacks that abort
    uint64_t total = expected_size_;
    auto last_report = Clock::now();

    FetchCallbacks cb;
    // Stall detection by the time since the last byte (curl's low-speed check averages over a
    // window, so a fast start hides a stall for a long time).
    auto last_byte = Clock::now();
    cb.keep_going = [&] {
      if (ctx_.job.stop_requested()) return false;
      if (Clock::now() - last_byte > std::chrono::seconds(ctx_.cfg.low_speed_time_s)) {
        fail = {Outcome::retry, url_ + ": no data for " + std::to_string(ctx_.cfg.low_speed_time_s) + " s (stalled)"};
        return false;
      }
      return true;
    };
    cb.on_head = [&](const FetchHead& h) {
      if (h.status >= 300) return true;  // handled after the transfer
      if (h.status == 206) {
        if (!h.has_range || h.range_start != have_) {
          fail = {Outcome::restart, "server resumed at another offset"};
          return false;
        }
        if (!etag_.empty() && !h.etag.empty() && h.etag != etag_) {
          fail = {Outcome::restart, "file changed on the server (ETag)"};
          return false;
        }
        if (h.range_total) total = h.range_total;
      } else {
        // 200: the server sends everything (Range ignored): start over cleanly.
        if (have_ > 0) {
          ctx_.log.info("pull " + ctx_.job.id() + ": server ignored Range, restarting");
          if (auto r = truncate_restart(); !r.ok()) {
            fail = {Outcome::fatal, r.error().msg};
            return false;
          }
        }
        if (h.has_length) total = h.content_length;
      }
      if (expected_size_ && total != expected_size_) {
        fail = {Outcome::fatal, url_ + ": the server announces " + std::to_string(total) +
                                    " bytes, the repository listing says " + std::to_string(expected_size_)};
        return false;
      }
      etag_ = h.etag;
      total_ = total;
      ctx_.job.progress(have_, total_);
      return true;
    };
    cb.on_body = [&](std::span<const uint8_t> b) {
      if (total_ && have_ + b.size() > total_) {
        fail = {Outcome::fatal, url_ + ": the server sent more than the " + std::to_string(total_) +
                                    " bytes it announced"};
        return false;
      }
      if (magic_.size() < 4 && have_ == magic_.size()) {
        magic_.append(reinterpret_cast<const char*>(b.data()), std::min<size_t>(4 - magic_.size(), b.size()));
        if (magic_.size() == 4 && magic_ != "GGUF") {
          fail = {Outcome::fatal, url_ + ": not a GGUF file (it starts with \"" + printable(magic_) +
                                      "\"; an HTML page or an unconverted checkpoint?)"};
          discard_ = true;
          return false;
        }
      }
      if (auto r = write_all(fd_, b.data(), b.size(), part_); !r.ok()) {
        fail = {Outcome::fatal, r.error().msg};
        return false;
      }
      hash_.update(b);
      have_ += b.size();
      if (ctx_.on_bytes) ctx_.on_bytes(b.size());
      last_byte = Clock::now();
      if (Clock::now() - last_report > std::chrono::milliseconds(100)) {
        last_report = Clock::now();
        ctx_.job.progress(have_, total_);
      }
      return true;
    };

    FetchResult r = http_fetch(url_, opt, cb);
    ctx_.job.progress(have_, total_);
    if (ctx_.job.stop_requested()) return {Outcome::stopped, ""};
    if (r.outcome == FetchOutcome::aborted && fail.kind == Outcome::done) return {Outcome::retry, "aborted"};
    if (r.outcome == FetchOutcome::aborted) return fail;
    long st = r.head.status;
    if (st == 416) {
      if (have_ > 0 && total_ && have_ == total_) return {Outcome::done, ""};
      return {Outcome::restart, "server refused the resume offset (416)"};
    }
    if (st == 401 || st == 403) {
      std::string msg = url_ + ": access denied (" + std::to_string(st) + ")";
      if (plan_.kind == PullPlan::Kind::hf) msg += hf_auth_hint(ctx_.cfg);
      return {Outcome::fatal, msg};
    }
    if (st == 404) return {Outcome::fatal, url_ + ": not found (404)"};
    if (st == 408 || st == 429 || st >= 500) return {Outcome::retry, url_ + ": server error " + std::to_string(st)};
    if (st >= 300) return {Outcome::fatal, url_ + ": unexpected HTTP status " + std::to_string(st)};
    if (r.outcome == FetchOutcome::transient) return {Outcome::retry, r.error};
    if (r.outcome == FetchOutcome::fatal) return {Outcome::fatal, url_ + ": " + r.error};
    if (total_ && have_ < total_) return {Outcome::retry, "connection ended early"};
    if (have_ == 0) return {Outcome::fatal, url_ + ": empty response"};
    return {Outcome::done, ""};
  }

  static std::string printable(const std::string& s) {
    std::string o;
    for (unsigned char c : s) o += (c >= 32 && c < 127) ? char(c) : '?';
    return o;
  }

 public:
  bool discard_ = false;  // the part is garbage (not GGUF): delete even on failure

 private:
  PullContext& ctx_;
  const PullPlan& plan_;
  std::string url_;
  std::vector<std::string> headers_;
  fs::path part_;
  uint64_t expected_size_ = 0;
  int fd_ = -1;
  Sha256 hash_;
  uint64_t have_ = 0;
  uint64_t total_ = 0;
  std::string etag_;
  std::string magic_;
};

void fail_job(PullContext& ctx, const std::string& msg) {
  ctx.log.warn("pull " + ctx.job.id() + " failed: " + msg);
  ctx.job.finish(JobState::failed, msg);
  ctx.persist();
}

}  // namespace

Result<HfFile> choose_hf_file(const nlohmann::json& listing, const std::string& quant, const std::string& repo) {
  if (!listing.is_array()) return Error(Code::corrupt, repo + ": unexpected file listing from Hugging Face");
  std::vector<HfFile> ggufs;
  for (const auto& e : listing) {
    if (!e.is_object() || e.value("type", "") != "file") continue;
    std::string path = e.value("path", "");
    std::string l = lower(path);
    if (l.size() < 5 || l.substr(l.size() - 5) != ".gguf" || l.find("mmproj") != std::string::npos) continue;
    HfFile f{path, e.value("size", uint64_t(0)), ""};
    if (auto lfs = e.find("lfs"); lfs != e.end() && lfs->is_object()) {
      std::string oid = lfs->value("oid", "");
      if (oid.size() == 64) f.digest = "sha256:" + oid;
      f.size = lfs->value("size", f.size);
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

void run_pull(PullContext& ctx, const PullPlan& plan) {
  Job& job = ctx.job;
  job.set_state(JobState::running);
  ctx.persist();
  job.emit({"pulling manifest", "", 0, 0});

  if (plan.kind == PullPlan::Kind::local) {
    CreateOptions opt;
    opt.source = plan.local.string();
    job.emit({"copying " + plan.local.filename().string(), "", 0, 0});
    auto m = ctx.store.create(plan.name, plan.local, opt);
    if (!m.ok()) return fail_job(ctx, m.error().msg);
    job.emit({"writing manifest", "", 0, 0});
    job.emit({"success", "", 0, 0});
    job.finish(JobState::succeeded);
    ctx.persist();
    return;
  }

  std::string url = plan.url;
  std::vector<std::string> headers;
  std::string expected_digest;
  uint64_t expected_size = 0;
  bool to_hf = plan.kind == PullPlan::Kind::hf || url.rfind(ctx.cfg.hf_endpoint + "/", 0) == 0;
  if (to_hf && !ctx.cfg.hf_token.empty()) headers.push_back("Authorization: Bearer " + ctx.cfg.hf_token);

  if (plan.kind == PullPlan::Kind::hf) {
    const ModelName& r = plan.hf;
    std::string file = r.tag;
    if (!r.is_hf_file()) {
      FetchOptions opt;
      opt.headers = headers;
      opt.connect_timeout_s = ctx.cfg.connect_timeout_s;
      opt.low_speed_time_s = ctx.cfg.low_speed_time_s;
      std::string api = ctx.cfg.hf_endpoint + "/api/models/" + r.ns + "/" + r.model + "/tree/main";
      auto listing = http_get_text(api, opt);
      if (!listing.ok()) return fail_job(ctx, listing.error().msg);
      if (listing->status == 401 || listing->status == 403)
        return fail_job(ctx, "hf.co/" + r.ns + "/" + r.model + ": access denied (" +
                                 std::to_string(listing->status) + ")" + hf_auth_hint(ctx.cfg));
      if (listing->status == 404)
        return fail_job(ctx, "hf.co/" + r.ns + "/" + r.model + ": repository not found (404)" + hf_auth_hint(ctx.cfg));
      if (listing->status != 200)
        return fail_job(ctx, api + ": HTTP " + std::to_string(listing->status));
      auto j = nlohmann::json::parse(listing->body, nullptr, false);
      auto f = choose_hf_file(j, r.tag, "hf.co/" + r.ns + "/" + r.model);
      if (!f.ok()) return fail_job(ctx, f.error().msg);
      file = f->path;
      expected_digest = f->digest;
      expected_size = f->size;
    }
    url = ctx.cfg.hf_endpoint + "/" + r.ns + "/" + r.model + "/resolve/main/" + file;
  }

  Sha256 key_hash;
  key_hash.update(plan.key);
  std::string key_hex = key_hash.finish().substr(7, 16);
  fs::path part = ctx.store.layout().blobs() / (key_hex + ".part");
  std::string label = expected_digest.empty() ? "sha256:" + key_hex : expected_digest;

  Download dl(ctx, plan, url, headers, part, expected_size);
  auto digest = dl.run(label);
  if (!digest.ok()) {
    if (digest.error().code == Code::cancelled) {
      if (!job.discard_requested()) return;  // daemon shutdown: resume later
      ::unlink(part.c_str());
      job.finish(JobState::cancelled, "cancelled");
      ctx.persist();
      return;
    }
    if (dl.discard_) ::unlink(part.c_str());
    return fail_job(ctx, digest.error().msg);
  }

  job.emit({"verifying sha256 digest", "", 0, 0});
  if (!expected_digest.empty() && *digest != expected_digest) {
    ::unlink(part.c_str());
    return fail_job(ctx, url + ": digest mismatch: got " + *digest + ", the repository says " + expected_digest +
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
  BlobPin pin = ctx.store.pin(*digest);
  if (auto r = ctx.store.commit_blob(part, *digest); !r.ok()) return fail_job(ctx, r.error().msg);

  job.emit({"writing manifest", "", 0, 0});
  CreateOptions opt;
  opt.source = plan.kind == PullPlan::Kind::hf ? plan.hf.display() : url;
  auto m = ctx.store.create_from_blob(plan.name, *digest, opt);
  pin = BlobPin();
  if (!m.ok()) {
    ctx.store.release_blob(*digest);
    return fail_job(ctx, m.error().msg);
  }
  job.emit({"success", "", 0, 0});
  job.finish(JobState::succeeded);
  ctx.persist();
}

}  // namespace nurl
