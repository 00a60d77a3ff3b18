// What every model-backed route shares, whatever its wire format (ollama, OpenAI, Anthropic,
// web chat): resolve the name, merge the model's default options under the request's, build the
// sched::Job (sampling, num_predict, stop, context size, keep-alive) and submit it. Each route
// only translates its wire fields into an InferenceParams and the job's events back into its
// own shapes; none has a generation loop of its own.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "api/chat-turn.h"
#include "api/ollama.h"
#include "http/message.h"
#include "routes/context.h"
#include "routes/event-stream.h"
#include "scheduler/job.h"

namespace nurl {

struct InferenceParams {
  std::string model;                  // as the client named it
  api::Options options;               // the request's options (the model's defaults go under them)
  std::optional<Nanos> keep_alive;
  bool truncate = true;
  bool allow_path = false;            // a .gguf path is fine over TCP (the configured default model)
};

struct Inference {
  ModelRef model;       // the resolved model (path, template, system, defaults)
  api::Options options;  // defaults merged with the request's
  std::shared_ptr<sched::Job> job;
};

sched::Sampling sampling_from(const api::Options& o);

// Resolves the model (404 / 400 for bad names and paths) and builds a generate job with the
// common fields set; the caller adds `prepare` and any structured-output fields.
Result<Inference> begin_inference(RouteContext& ctx, const http::Request& req, const InferenceParams& p);

// An empty prompt loads the model, or unloads it with keep_alive 0.
void make_load_job(sched::Job& job);

// Submits the job (503 when the queue is full) and returns the scheduler's error or nothing.
Result<void> submit_job(RouteContext& ctx, const std::shared_ptr<sched::Job>& job);

// Submits the job and returns its reply: `framing` while streaming, else one JSON body; every
// error (a full queue, a failed load, one after the first byte) in the API's shape.
http::Reply submit_sse(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, Framing framing,
                       bool stream, const ErrorBody& error_body);
// A finished reply's statistics with ollama's field names (done_reason, total_duration since
// t0, load/prompt/eval durations and counts, truncated_prompt_tokens when the prompt was cut).
void put_done_stats(api::Json& j, const sched::DoneInfo& d, std::chrono::steady_clock::time_point t0);

// Logs option names the engine does not use.
void log_ignored_options(RouteContext& ctx, const std::vector<std::string>& ignored);

// The wire APIs' conversation turns as the scheduler's chat messages.
std::vector<sched::ChatMessage> chat_messages(const std::vector<api::ChatTurn>& turns);

// A conversation's prepare: the model's default system prompt goes first unless the messages
// bring one; rendered with the model's chat template (or the store's), or without a template the
// contents one per line; then tokenized with the special tokens. The job's tools and think
// (set before this, by apply_structured or the native route) go to the template.
std::function<Result<sched::PreparedPrompt>(const sched::LoadedModel&)> chat_prepare(
    std::vector<sched::ChatMessage> messages, const ModelRef& model, const sched::Job& job);

// Structured output, tools, thinking and logprobs onto the job.
void apply_structured(sched::Job& job, const api::StructuredFields& s);

}  // namespace nurl
