// ChunkSources for the model-management routes. JobStream relays a Job's progress as ollama's
// NDJSON ProgressResponse lines; it only watches, so a client that goes away never stops the job.
// BackgroundReply runs one blocking task (hashing a blob, importing a file) on its own thread and
// yields its JSON result as a single chunk, so no I/O thread ever blocks on disk work.
#pragma once

#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "http/message.h"
#include "jobs/job.h"

namespace nurl {

class JobStream : public http::ChunkSource {
 public:
  // final_only: yield just the last line (stream:false). with_id: every line names the job
  // ("job": id), for /api/jobs, whose clients follow or cancel it later.
  JobStream(std::shared_ptr<Job> job, bool final_only, bool with_id = false)
      : job_(std::move(job)), final_only_(final_only), with_id_(with_id) {}
  boost::asio::awaitable<Result<std::optional<std::string>>> next() override;
  void cancel() override;

 private:
  std::shared_ptr<Job> job_;
  std::string line(const ProgressEvent& e) const;

  bool final_only_;
  bool with_id_;
  bool finished_ = false;
  bool cancelled_ = false;
  size_t sent_events_ = 0;     // events fully sent
  uint64_t sent_completed_ = 0;  // progress of the last event already sent
  std::shared_ptr<boost::asio::steady_timer> timer_;
};

http::Stream job_stream(std::shared_ptr<Job> job, bool stream, bool with_id = false);

// Runs `task` on a new thread; the reply is its JSON text (or its Error as an HTTP status).
http::Stream background_reply(std::function<Result<std::string>()> task, std::string content_type);

}  // namespace nurl
