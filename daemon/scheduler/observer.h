// Observer: what the scheduler and its workers report as they run (the daemon's metrics listen).
// Called on the scheduler's and the workers' threads, so implementations must be thread-safe and
// quick (no I/O). Every method has an empty default; the scheduler uses a no-op one when given none.
#pragma once

#include "core/duration.h"

namespace nurl::sched {

class Observer {
 public:
  enum class Unload { expired, evicted, shutdown };

  virtual ~Observer() = default;
  virtual void job_started(Nanos queued) { (void)queued; }  // got a slot after `queued` since submission
  virtual void job_finished() {}                            // its slot is free again
  virtual void model_loaded(Nanos took, bool ok) { (void)took, (void)ok; }
  virtual void model_unloaded(Unload why) { (void)why; }
  virtual void prompt_evaluated(int tokens) { (void)tokens; }       // a sequence's prompt is in the cache
  virtual void first_token(Nanos since_submitted) { (void)since_submitted; }
  virtual void next_token(Nanos since_previous) { (void)since_previous; }
};

}  // namespace nurl::sched
