// JobStream and BackgroundReply (see job-stream.h). Both park on a steady_timer that a waker
// cancels through a post to the coroutine's executor; the waker is registered under the
// producer's lock before suspending, so a wake-up cannot be lost (same scheme as sched::Channel).
#include "routes/job-stream.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <thread>

#include "core/json-text.h"

namespace nurl {

namespace asio = boost::asio;

std::string JobStream::line(const ProgressEvent& e) const {
  nlohmann::json j = e.to_json();
  if (with_id_) j["job"] = job_->id();
  return dump_json(j);
}

boost::asio::awaitable<Result<std::optional<std::string>>> JobStream::next() {
  auto ex = co_await asio::this_coro::executor;
  while (!finished_ && !cancelled_) {
    JobSnapshot s = job_->snapshot();
    std::string out;
    if (!final_only_) {
      // The last sent event again when its progress moved, then every event not sent yet.
      if (sent_events_ > 0 && s.events[sent_events_ - 1].completed != sent_completed_) {
        out += line(s.events[sent_events_ - 1]) + "\n";
        sent_completed_ = s.events[sent_events_ - 1].completed;
      }
      for (; sent_events_ < s.events.size(); ++sent_events_) {
        out += line(s.events[sent_events_]) + "\n";
        sent_completed_ = s.events[sent_events_].completed;
      }
    }
    if (!out.empty()) co_return std::optional<std::string>(out);
    if (job_done(s.state)) {
      finished_ = true;
      if (s.state == JobState::failed) co_return Error(Code::io, s.error);
      if (s.state == JobState::cancelled) co_return Error(Code::cancelled, s.kind + " cancelled");
      if (final_only_) co_return std::optional<std::string>(line({"success", "", 0, 0, ""}));
      break;
    }
    timer_ = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
    auto timer = timer_;
    if (job_->on_change(s.version, [ex, timer] { asio::post(ex, [timer] { timer->cancel(); }); })) {
      boost::system::error_code ec;
      co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
  }
  co_return std::optional<std::string>{};
}

void JobStream::cancel() {
  cancelled_ = true;
  if (timer_) timer_->cancel();
}

http::Stream job_stream(std::shared_ptr<Job> job, bool stream, bool with_id) {
  http::Stream s;
  s.content_type = stream ? "application/x-ndjson" : "application/json; charset=utf-8";
  s.single = !stream;
  s.source = std::make_shared<JobStream>(std::move(job), !stream, with_id);
  s.error_chunk = [](const Error& e) { return http::ndjson_error_line(e); };
  return s;
}

namespace {

struct Shared {
  std::mutex mu;
  std::optional<Result<std::string>> result;
  std::function<void()> waker;
};

class BackgroundSource : public http::ChunkSource {
 public:
  explicit BackgroundSource(std::function<Result<std::string>()> task) : shared_(std::make_shared<Shared>()) {
    std::thread([sh = shared_, task = std::move(task)] {
      auto r = task();
      std::function<void()> wake;
      {
        std::lock_guard lk(sh->mu);
        sh->result = std::move(r);
        wake = std::exchange(sh->waker, nullptr);
      }
      if (wake) wake();
    }).detach();
  }

  boost::asio::awaitable<Result<std::optional<std::string>>> next() override {
    if (done_) co_return std::optional<std::string>{};
    auto ex = co_await asio::this_coro::executor;
    while (!cancelled_) {
      auto timer = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
      {
        std::lock_guard lk(shared_->mu);
        if (shared_->result) {
          done_ = true;
          if (!shared_->result->ok()) co_return shared_->result->error();
          co_return std::optional<std::string>(shared_->result->value());
        }
        shared_->waker = [ex, timer] { asio::post(ex, [timer] { timer->cancel(); }); };
      }
      timer_ = timer;
      boost::system::error_code ec;
      co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return Error(Code::cancelled, "request cancelled");
  }

  void cancel() override {
    cancelled_ = true;
    if (timer_) timer_->cancel();
  }

 private:
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<asio::steady_timer> timer_;
  bool done_ = false;
  bool cancelled_ = false;
};

}  // namespace

http::Stream background_reply(std::function<Result<std::string>()> task, std::string content_type) {
  http::Stream s;
  s.content_type = std::move(content_type);
  s.single = true;
  s.source = std::make_shared<BackgroundSource>(std::move(task));
  s.error_chunk = [](const Error& e) { return http::ndjson_error_line(e); };
  return s;
}

}  // namespace nurl
