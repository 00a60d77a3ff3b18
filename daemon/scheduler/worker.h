// Worker: the one thread that runs a resident model. It owns the model's BatchRunner (KV cache
// for n_slots sequences) and runs the continuous-batching loop: admit queued jobs into free
// slots (round-robin by user), then one runner step per iteration that advances every decoding
// sequence by one token and feeds each prefilling sequence its next prompt chunk, together (the
// engine reads the weights once for all). Cancellation (the consumer closed its channel) is
// checked before every step, so a slot frees at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/log.h"
#include "scheduler/fair-queue.h"
#include "scheduler/job.h"
#include "scheduler/model.h"
#include "scheduler/observer.h"

namespace nurl::sched {

class Worker {
 public:
  struct Hooks {
    std::function<void(const Job&)> admitted;  // the job left the queue (got a slot or failed)
    std::function<void(const Job&)> finished;  // the job is done; its slot is free
    Observer* observer = nullptr;              // prompt and token timings (metrics); may be null
  };
  static constexpr int kPrefillChunk = 512;

  Worker(std::string name, std::shared_ptr<LoadedModel> model, std::unique_ptr<BatchRunner> runner, Logger& log,
         Hooks hooks);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void enqueue(std::shared_ptr<Job> job);
  // Ends every queued and running job with `why` (code cancelled) and joins the thread.
  void stop(const std::string& why);

 private:
  struct Seq;
  void run();
  void start(std::shared_ptr<Job> job, int slot, std::vector<Seq>& active);
  void step(std::vector<Seq>& active);
  void finish(Seq& s, const std::string& reason);
  std::string piece_of(const Seq& s, int32_t id) const;  // what a token prints into the reply
  // Counts a reasoning token; at the job's think_budget, queues the end of reasoning as tokens.
  void spend_thinking_budget(Seq& s);
  std::optional<TokenLogprob> sampled_logprobs(const Seq& s) const;
  bool send_all(Seq& s, std::vector<Event>& events);  // false: the consumer is gone
  // Ends a sequence: frees its slot and reports the job finished (release closes the stream,
  // fail sends the error first).
  void release(Seq& s);
  void fail(Seq& s, Error e);

  std::string name_;
  std::shared_ptr<LoadedModel> model_;
  std::unique_ptr<BatchRunner> runner_;
  Logger& log_;
  Hooks hooks_;

  std::mutex mu_;  // guards incoming_, stop_, stop_reason_
  std::condition_variable cv_;
  FairQueue incoming_;  // round-robin by user
  bool stop_ = false;
  std::string stop_reason_;
  std::vector<int> free_slots_;  // worker thread only
  std::thread thread_;
};

}  // namespace nurl::sched
