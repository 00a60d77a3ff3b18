// DaemonMetrics: every metric nurllamad exports on GET /metrics. Counters and histograms move as
// things happen (the http server reports requests, the scheduler and workers report through
// sched::Observer, pulls report downloaded bytes); gauges that describe the scheduler's state
// (queue depth, resident models and their memory) are read when the metrics are rendered.
//
//   nurllama_http_requests_total{route,method,status}   nurllama_http_request_duration_seconds{route}
//   nurllama_queue_depth  nurllama_queue_wait_seconds  nurllama_active_sequences
//   nurllama_models_resident  nurllama_model_memory_bytes{model}
//   nurllama_model_loads_total{result}  nurllama_model_load_seconds  nurllama_model_unloads_total{reason}
//   nurllama_prompt_tokens_total  nurllama_generated_tokens_total
//   nurllama_time_to_first_token_seconds  nurllama_inter_token_seconds  nurllama_pull_bytes_total
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "metrics/registry.h"
#include "scheduler/observer.h"

namespace nurl {

namespace sched {
class Scheduler;
}

class DaemonMetrics final : public sched::Observer {
 public:
  DaemonMetrics();

  // One answered request: `route` is the matched pattern ("" when none matched).
  void request(const std::string& route, const std::string& method, int status, std::chrono::nanoseconds took);
  void pull_bytes(uint64_t n);

  void job_started(Nanos queued) override;
  void job_finished() override;
  void model_loaded(Nanos took, bool ok) override;
  void model_unloaded(Unload why) override;
  void prompt_evaluated(int tokens) override;
  void first_token(Nanos since_submitted) override;
  void next_token(Nanos since_previous) override;

  // The text exposition, with the scheduler's gauges read now (null: left as they were).
  std::string exposition(const sched::Scheduler* scheduler);

 private:
  metrics::Registry reg_;
};

}  // namespace nurl
