#include "metrics/daemon-metrics.h"

#include <map>

#include "scheduler/scheduler.h"

namespace nurl {

namespace {

using metrics::Registry;

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

const std::vector<double> kRequestBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
const std::vector<double> kWaitBuckets{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
const std::vector<double> kTokenBuckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};

}  // namespace

DaemonMetrics::DaemonMetrics() {
  using T = Registry::Type;
  reg_.declare("nurllama_http_requests_total", T::counter, "HTTP requests answered, by route pattern, method and status.");
  reg_.declare("nurllama_http_request_duration_seconds", T::histogram,
               "Time from the end of a request's body to the end of its reply, by route pattern.", kRequestBuckets);
  reg_.declare("nurllama_queue_depth", T::gauge, "Jobs waiting for a model to load or for a free slot.");
  reg_.declare("nurllama_queue_wait_seconds", T::histogram,
               "Time from submission until a job got a slot (includes loading its model).", kWaitBuckets);
  reg_.declare("nurllama_active_sequences", T::gauge, "Jobs holding a model's slot (prefilling, generating, embedding).");
  reg_.declare("nurllama_models_resident", T::gauge, "Models loaded in memory.");
  reg_.declare("nurllama_model_memory_bytes", T::gauge,
               "Memory charged to each resident model against the budget (weights and caches).");
  reg_.declare("nurllama_model_loads_total", T::counter, "Model loads, by result (ok, error).");
  reg_.declare("nurllama_model_load_seconds", T::histogram, "Time to load a model and create its cache.", kWaitBuckets);
  reg_.declare("nurllama_model_unloads_total", T::counter,
               "Model unloads, by reason: expired (keep-alive ran out or an unload was asked for), evicted (to make room "
               "for another model), shutdown.");
  reg_.declare("nurllama_prompt_tokens_total", T::counter, "Prompt tokens evaluated.");
  reg_.declare("nurllama_generated_tokens_total", T::counter, "Tokens generated.");
  reg_.declare("nurllama_time_to_first_token_seconds", T::histogram,
               "Time from submission to the first generated token (queue, load and prompt included).", kWaitBuckets);
  reg_.declare("nurllama_inter_token_seconds", T::histogram, "Time between consecutive generated tokens of a sequence.",
               kTokenBuckets);
  reg_.declare("nurllama_pull_bytes_total", T::counter, "Bytes downloaded by model pulls.");
  for (const char* n : {"nurllama_prompt_tokens_total", "nurllama_generated_tokens_total", "nurllama_pull_bytes_total"})
    reg_.add(n, {}, 0);
  for (const char* n : {"nurllama_queue_depth", "nurllama_active_sequences", "nurllama_models_resident"}) reg_.set(n, {}, 0);
  for (const char* r : {"ok", "error"}) reg_.add("nurllama_model_loads_total", {{"result", r}}, 0);
  for (const char* r : {"expired", "evicted", "shutdown"}) reg_.add("nurllama_model_unloads_total", {{"reason", r}}, 0);
}

void DaemonMetrics::request(const std::string& route, const std::string& method, int status,
                            std::chrono::nanoseconds took) {
  const std::string r = route.empty() ? "unmatched" : route;
  // 0: the client went away before any reply was written (nginx's 499).
  reg_.add("nurllama_http_requests_total", {{"route", r}, {"method", method}, {"status", std::to_string(status ? status : 499)}});
  reg_.observe("nurllama_http_request_duration_seconds", {{"route", r}}, seconds(took));
}

void DaemonMetrics::pull_bytes(uint64_t n) { reg_.add("nurllama_pull_bytes_total", {}, static_cast<double>(n)); }

void DaemonMetrics::job_started(Nanos queued) {
  reg_.observe("nurllama_queue_wait_seconds", {}, seconds(queued));
  reg_.add("nurllama_active_sequences", {}, 1);
}

void DaemonMetrics::job_finished() { reg_.add("nurllama_active_sequences", {}, -1); }

void DaemonMetrics::model_loaded(Nanos took, bool ok) {
  reg_.add("nurllama_model_loads_total", {{"result", ok ? "ok" : "error"}});
  if (ok) reg_.observe("nurllama_model_load_seconds", {}, seconds(took));
}

void DaemonMetrics::model_unloaded(Unload why) {
  const char* reason = why == Unload::expired ? "expired" : why == Unload::evicted ? "evicted" : "shutdown";
  reg_.add("nurllama_model_unloads_total", {{"reason", reason}});
}

void DaemonMetrics::prompt_evaluated(int tokens) { reg_.add("nurllama_prompt_tokens_total", {}, tokens); }

void DaemonMetrics::first_token(Nanos since_submitted) {
  reg_.add("nurllama_generated_tokens_total", {});
  reg_.observe("nurllama_time_to_first_token_seconds", {}, seconds(since_submitted));
}

void DaemonMetrics::next_token(Nanos since_previous) {
  reg_.add("nurllama_generated_tokens_total", {});
  reg_.observe("nurllama_inter_token_seconds", {}, seconds(since_previous));
}

std::string DaemonMetrics::exposition(const sched::Scheduler* scheduler) {
  if (scheduler) {
    auto resident = scheduler->resident();
    // One series per model (a model resident twice, with two context sizes, counts both).
    std::map<std::string, double> bytes;
    for (const auto& r : resident) bytes[r.name] += static_cast<double>(r.size_bytes);
    std::vector<std::pair<metrics::Labels, double>> memory;
    for (const auto& [name, b] : bytes) memory.push_back({{{"model", name}}, b});
    reg_.set("nurllama_queue_depth", {}, static_cast<double>(scheduler->waiting()));
    reg_.set("nurllama_models_resident", {}, static_cast<double>(resident.size()));
    reg_.set_all("nurllama_model_memory_bytes", memory);
  }
  return reg_.exposition();
}

}  // namespace nurl
