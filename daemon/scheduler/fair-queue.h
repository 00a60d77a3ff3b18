// FairQueue: jobs waiting for a model slot, served round-robin by user. Each user's jobs keep
// their order; users take turns, the one served longest ago first, and a newcomer joins the
// end of the turn order. So one user's ten queued requests delay another user's first by one
// turn at most. The empty user (anonymous API calls) is one user like any other.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "scheduler/job.h"

namespace nurl::sched {

class FairQueue {
 public:
  void push(std::shared_ptr<Job> job) {
    for (auto& [user, jobs] : turns_) {
      if (user == job->user) {
        jobs.push_back(std::move(job));
        ++size_;
        return;
      }
    }
    std::string user = job->user;
    turns_.emplace_back(std::move(user), std::deque<std::shared_ptr<Job>>{std::move(job)});
    ++size_;
  }

  // The next user's oldest job; that user goes to the end of the turn order. Not empty().
  std::shared_ptr<Job> pop() {
    auto& [user, jobs] = turns_.front();
    auto job = std::move(jobs.front());
    jobs.pop_front();
    --size_;
    if (jobs.empty()) turns_.pop_front();
    else turns_.push_back(std::move(turns_.front())), turns_.pop_front();
    return job;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // Every job, in the order pop() would give them, leaving the queue empty.
  std::deque<std::shared_ptr<Job>> drain() {
    std::deque<std::shared_ptr<Job>> out;
    while (!empty()) out.push_back(pop());
    return out;
  }

 private:
  std::deque<std::pair<std::string, std::deque<std::shared_ptr<Job>>>> turns_;
  size_t size_ = 0;
};

}  // namespace nurl::sched
