// A heavy job kind for queue tests, with the engine's contract (convert.h): its producer copies
// a GGUF into out + ".partial" in `chunks` pieces (one "tensor" each), reports progress and a
// resume point (tensors done, file offset, sha256 of the prefix) after each, stops when
// on_progress says so (keeping the partial), resumes only from an intact prefix (else starts
// over) and renames the partial at the end. The copy's bytes are the test's oracle: they must
// equal the input's whatever the interruptions. It also records the scheduling policy and nice
// value of the producer's thread and of a thread that thread starts (what library threads get).
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "jobs/gguf-output.h"
#include "jobs/job-kind.h"
#include "store/fs-util.h"
#include "store/sha256.h"

namespace nurl::test {

struct FakeObservations {
  std::atomic<int> chunks_written{0};  // in this process, over all runs
  std::atomic<int> runs{0};
  std::atomic<int> threads_given{0};
  std::atomic<int> policy{-1}, nice{-100}, child_policy{-1}, child_nice{-100};
  std::atomic<int> resumed_at{-1};     // tensors_done of the last resumed run
};

struct FakeKindOptions {
  std::filesystem::path input;
  int chunks = 16;
  std::chrono::milliseconds delay{0};
  FakeObservations* seen = nullptr;
};

inline std::string hex_sha256(const std::string& bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish().substr(7);
}

inline int thread_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))); }

inline Result<void> fake_produce(const ProducerCall& call, const FakeKindOptions& o) {
  std::ifstream in(o.input, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  if (data.empty()) return Error(Code::not_found, o.input.string() + ": empty or missing");
  const uint64_t size = data.size(), piece = (size + o.chunks - 1) / o.chunks;
  const std::filesystem::path partial = call.out.string() + ".partial";
  if (o.seen) {
    ++o.seen->runs;
    o.seen->threads_given = call.threads;
    o.seen->policy = ::sched_getscheduler(0);
    o.seen->nice = thread_nice();
    std::thread([&] {
      o.seen->child_policy = ::sched_getscheduler(0);
      o.seen->child_nice = thread_nice();
    }).join();
  }
  int start = 0;
  uint64_t off = 0;
  if (call.resume.is_object()) {
    int done = call.resume.value("tensors_done", 0);
    uint64_t at = call.resume.value("file_offset", uint64_t(0));
    std::ifstream p(partial, std::ios::binary);
    std::string prefix(at, '\0');
    if (p && at <= size && p.read(prefix.data(), std::streamsize(at)) &&
        hex_sha256(prefix) == call.resume.value("prefix_sha256", "")) {
      start = done;
      off = at;
      if (o.seen) o.seen->resumed_at = done;
    }
  }
  int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(errno, "creating", partial);
  if (::ftruncate(fd, off_t(off)) != 0 || ::lseek(fd, off_t(off), SEEK_SET) < 0) {
    ::close(fd);
    return errno_error(errno, "truncating", partial);
  }
  for (int i = start; i < o.chunks && off < size; ++i) {
    if (!call.on_progress({"tensors", "blk." + std::to_string(i), off, size})) {
      ::close(fd);
      return Error(Code::cancelled, "stopped");  // the partial stays (keep_partial_on_cancel)
    }
    uint64_t n = std::min(piece, size - off);
    if (auto r = write_all(fd, data.data() + off, n, partial); !r.ok()) {
      ::close(fd);
      ::unlink(partial.c_str());
      return r;
    }
    off += n;
    if (o.seen) ++o.seen->chunks_written;
    if (o.delay.count()) std::this_thread::sleep_for(o.delay);
    call.on_checkpoint({{"tensors_done", i + 1}, {"file_offset", off}, {"prefix_sha256", hex_sha256(data.substr(0, off))}});
  }
  call.on_progress({"finishing", "", size, size});
  ::fsync(fd);
  ::close(fd);
  return rename_durable(partial, call.out);
}

class FakeKind : public JobKind {
 public:
  explicit FakeKind(FakeKindOptions o) : o_(std::move(o)) {}
  std::string name() const override { return "fake"; }
  bool heavy() const override { return true; }
  Result<JobPlan> plan(const nlohmann::json& request) const override {
    NURL_ASSIGN(OutputTarget t, OutputTarget::from_request(request));
    nlohmann::json r = {{"source", request.value("source", "")}};
    t.to_request(r);
    if (int th = request.value("threads", 0); th > 0) r["threads"] = th;
    return JobPlan{r["source"].get<std::string>() + " -> " + t.describe(), t.describe(), r};
  }
  void run(JobContext& ctx) const override {
    auto t = OutputTarget::from_request(ctx.request);
    if (!t.ok()) return fail_job(ctx, t.error().msg);
    run_gguf_job(ctx, "copying model", *t, [&](const ProducerCall& call) { return fake_produce(call, o_); });
  }
  void discard(JobContext& ctx) const override {
    if (auto t = OutputTarget::from_request(ctx.request); t.ok()) discard_gguf_output(ctx, *t);
  }

 private:
  FakeKindOptions o_;
};

}  // namespace nurl::test
