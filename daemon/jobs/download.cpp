// The download loop (see download.h) keeps three facts in step: the bytes in the .part file,
// `have` (their count) and `hash` (their SHA-256 so far). Any response that does not continue
// exactly at `have` truncates the part and restarts all three at zero.
#include "jobs/download.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "api/json-fields.h"
#include "jobs/http-fetch.h"
#include "jobs/pull.h"
#include "store/fs-util.h"
#include "store/sha256.h"

namespace nurl {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

bool sleep_unless_stopped(const Job& job, std::chrono::milliseconds d) {
  auto until = Clock::now() + d;
  while (Clock::now() < until) {
    if (job.stop_requested()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !job.stop_requested();
}

std::string printable(const std::string& s) {
  std::string o;
  for (unsigned char c : s) o += (c >= 32 && c < 127) ? char(c) : '?';
  return o;
}

bool strong_etag(const std::string& e) { return e.size() >= 2 && e.front() == '"'; }

// Failure classes of one attempt: the loop retries transient ones.
struct Outcome {
  enum Kind { done, unchanged, retry, restart, fatal, stopped } kind = done;
  std::string error;
};

class Download {
 public:
  Download(const DownloadSpec& spec, const PullConfig& cfg, Job& job, Logger& log)
      : spec_(spec), cfg_(cfg), job_(job), log_(log) {}
  ~Download() {
    if (fd_ >= 0) ::close(fd_);
  }

  Result<Downloaded> run() {
    const fs::path& part = spec_.part;
    fd_ = ::open(part.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return errno_error(errno, "creating", part);
    const std::string& label = spec_.label_digest;
    job_.emit({"pulling " + label.substr(label.find(':') + 1, 12), label, spec_.expected_size, 0, "downloading"});
    // Resume: re-hash what an earlier attempt (or daemon) left, as a stream.
    auto prior = hash_file_into(hash_, part, [&](uint64_t n) {
      job_.progress(n, spec_.expected_size);
      return !job_.stop_requested();
    });
    if (!prior.ok()) return prior.error();
    have_ = *prior;
    if (::lseek(fd_, 0, SEEK_END) < 0) return errno_error(errno, "seeking", part);
    if (have_ > 0) log_.info("pull " + job_.id() + ": resuming at byte " + std::to_string(have_));
    // Only a fresh start may ask "changed since?": a partial part is continued as it is.
    conditional_ = have_ == 0 && !spec_.validators.empty();

    int failures = 0;
    uint64_t best = have_;
    std::chrono::milliseconds delay = cfg_.backoff;
    for (int attempt = 0; attempt < 1000; ++attempt) {  // bounded: failures cap it far earlier
      Outcome o = attempt_once();
      if (o.kind == Outcome::done) return finished();
      if (o.kind == Outcome::unchanged) {
        ::unlink(part.c_str());  // empty: nothing was written
        Downloaded d;
        d.unchanged = true;
        d.validators = validators();
        return d;
      }
      if (o.kind == Outcome::stopped) return Error(Code::cancelled, "pull stopped");
      if (o.kind == Outcome::fatal) {
        if (discard_) ::unlink(part.c_str());
        return Error(Code::io, o.error);
      }
      if (o.kind == Outcome::restart) {
        NURL_TRY(truncate_restart());
      }
      if (have_ > best) {  // progress: the failure budget starts again
        best = have_;
        failures = 0;
        delay = cfg_.backoff;
      }
      if (++failures >= cfg_.max_attempts)
        return Error(Code::io, "download of " + spec_.url + " failed " + std::to_string(failures) +
                                   " times in a row, last: " + o.error + " (pull again to resume)");
      log_.warn("pull " + job_.id() + ": " + o.error + "; retrying in " + std::to_string(delay.count()) + " ms");
      if (!sleep_unless_stopped(job_, delay)) return Error(Code::cancelled, "pull stopped");
      delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(30));
    }
    return Error(Code::io, "download of " + spec_.url + " did not finish");
  }

 private:
  Result<Downloaded> finished() {
    Downloaded d;
    d.digest = hash_.finish();
    d.size = have_;
    d.validators = validators();
    return d;
  }

  nlohmann::json validators() const {
    nlohmann::json v = {{"url", spec_.url}, {"size", have_ ? have_ : total_}};
    if (!head_.etag.empty()) v["etag"] = head_.etag;
    if (!head_.last_modified.empty()) v["last_modified"] = head_.last_modified;
    if (!head_.linked_etag.empty()) v["linked_etag"] = head_.linked_etag;
    if (!head_.repo_commit.empty()) v["repo_commit"] = head_.repo_commit;
    return v;
  }

  Result<void> truncate_restart() {
    if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0)
      return errno_error(errno, "truncating", spec_.part);
    hash_.reset();
    have_ = 0;
    magic_.clear();
    return ok();
  }

  Outcome attempt_once() {
    const std::string& url = spec_.url;
    FetchOptions opt;
    opt.headers = spec_.headers;
    opt.resume_from = have_;
    opt.connect_timeout_s = cfg_.connect_timeout_s;
    opt.low_speed_time_s = cfg_.low_speed_time_s;
    opt.max_redirects = cfg_.max_redirects;
    const std::string old_etag = jf::str(spec_.validators, "etag");
    if (conditional_) {
      if (!old_etag.empty()) opt.headers.push_back("If-None-Match: " + old_etag);
      if (std::string lm = jf::str(spec_.validators, "last_modified"); !lm.empty())
        opt.headers.push_back("If-Modified-Since: " + lm);
    }
    Outcome fail;  // set by callbacks that abort
    uint64_t total = spec_.expected_size;
    auto last_report = Clock::now();

    FetchCallbacks cb;
    // Stall detection by the time since the last byte (curl's low-speed check averages over a
    // window, so a fast start hides a stall for a long time).
    auto last_byte = Clock::now();
    cb.keep_going = [&] {
      if (job_.stop_requested()) return false;
      if (Clock::now() - last_byte > std::chrono::seconds(cfg_.low_speed_time_s)) {
        fail = {Outcome::retry, url + ": no data for " + std::to_string(cfg_.low_speed_time_s) + " s (stalled)"};
        return false;
      }
      return true;
    };
    cb.on_head = [&](const FetchHead& h) {
      head_ = h;
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
        if (conditional_ && strong_etag(old_etag) && h.etag == old_etag) {
          // The server ignored If-None-Match but names the same bytes: stop before the body.
          fail = {Outcome::unchanged, ""};
          return false;
        }
        // 200: the server sends everything (Range ignored): start over cleanly.
        if (have_ > 0) {
          log_.info("pull " + job_.id() + ": server ignored Range, restarting");
          if (auto r = truncate_restart(); !r.ok()) {
            fail = {Outcome::fatal, r.error().msg};
            return false;
          }
        }
        if (h.has_length) total = h.content_length;
      }
      if (spec_.expected_size && total != spec_.expected_size) {
        fail = {Outcome::fatal, url + ": the server announces " + std::to_string(total) +
                                    " bytes, the repository listing says " + std::to_string(spec_.expected_size)};
        return false;
      }
      etag_ = h.etag;
      total_ = total;
      job_.progress(have_, total_);
      return true;
    };
    cb.on_body = [&](std::span<const uint8_t> b) {
      if (total_ && have_ + b.size() > total_) {
        fail = {Outcome::fatal, url + ": the server sent more than the " + std::to_string(total_) +
                                    " bytes it announced"};
        return false;
      }
      if (magic_.size() < 4 && have_ == magic_.size()) {
        magic_.append(reinterpret_cast<const char*>(b.data()), std::min<size_t>(4 - magic_.size(), b.size()));
        if (magic_.size() == 4 && magic_ != "GGUF") {
          fail = {Outcome::fatal, url + ": not a GGUF file (it starts with \"" + printable(magic_) +
                                      "\"; an HTML page or an unconverted checkpoint?)"};
          discard_ = true;
          return false;
        }
      }
      if (auto r = write_all(fd_, b.data(), b.size(), spec_.part); !r.ok()) {
        fail = {Outcome::fatal, r.error().msg};
        return false;
      }
      hash_.update(b);
      if (cfg_.on_bytes) cfg_.on_bytes(b.size());
      have_ += b.size();
      last_byte = Clock::now();
      if (Clock::now() - last_report > std::chrono::milliseconds(100)) {
        last_report = Clock::now();
        job_.progress(have_, total_);
      }
      return true;
    };

    FetchResult r = http_fetch(url, opt, cb);
    job_.progress(have_, total_);
    if (job_.stop_requested()) return {Outcome::stopped, ""};
    if (r.outcome == FetchOutcome::aborted && fail.kind == Outcome::done) return {Outcome::retry, "aborted"};
    if (r.outcome == FetchOutcome::aborted) return fail;
    head_ = r.head;
    long st = r.head.status;
    if (st == 304 && conditional_) return {Outcome::unchanged, ""};
    conditional_ = false;  // a retry after a failed conditional attempt asks plainly
    if (st == 416) {
      if (have_ > 0 && total_ && have_ == total_) return {Outcome::done, ""};
      return {Outcome::restart, "server refused the resume offset (416)"};
    }
    if (st == 401 || st == 403) return {Outcome::fatal, url + ": access denied (" + std::to_string(st) + ")" + spec_.auth_hint};
    if (st == 404) return {Outcome::fatal, url + ": not found (404)"};
    if (st == 408 || st == 429 || st >= 500) return {Outcome::retry, url + ": server error " + std::to_string(st)};
    if (st >= 300) return {Outcome::fatal, url + ": unexpected HTTP status " + std::to_string(st)};
    if (r.outcome == FetchOutcome::transient) return {Outcome::retry, r.error};
    if (r.outcome == FetchOutcome::fatal) return {Outcome::fatal, url + ": " + r.error};
    if (total_ && have_ < total_) return {Outcome::retry, "connection ended early"};
    if (have_ == 0) return {Outcome::fatal, url + ": empty response"};
    return {Outcome::done, ""};
  }

  const DownloadSpec& spec_;
  const PullConfig& cfg_;
  Job& job_;
  Logger& log_;
  int fd_ = -1;
  Sha256 hash_;
  uint64_t have_ = 0;
  uint64_t total_ = 0;
  std::string etag_;
  std::string magic_;
  FetchHead head_;
  bool conditional_ = false;
  bool discard_ = false;  // the part is garbage (not GGUF): delete even on failure
};

}  // namespace

Result<Downloaded> download(const DownloadSpec& spec, const PullConfig& cfg, Job& job, Logger& log) {
  return Download(spec, cfg, job, log).run();
}

}  // namespace nurl
