// A Job is one request for a model's time (generate/chat, embed, load, unload) and the Events it
// sends back through its Channel. The route builds the Job; the scheduler finds or loads the
// model; the model's worker runs it. `prepare` turns the request into prompt tokens on the
// worker, where the tokenizer and chat template of the loaded model are at hand.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/duration.h"
#include "core/error.h"
#include "scheduler/channel.h"
#include "scheduler/model.h"

namespace nurl::sched {

using Clock = std::chrono::steady_clock;

// One sampled token with its log-probability and the most likely alternatives, all from the
// distribution the sampler actually drew from (after every sampling stage and any constraint).
struct TokenLogprob {
  std::string token;  // the piece's bytes (may be partial UTF-8)
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // most likely first; size = Job::top_logprobs
};

struct DoneInfo {
  std::string reason;               // "stop", "length", "load", "unload"
  Nanos load_duration{0};
  Nanos prompt_eval_duration{0};
  Nanos eval_duration{0};
  int prompt_eval_count = 0;
  int eval_count = 0;
  int truncated_tokens = 0;         // prompt tokens dropped to fit the context
  std::string stop_sequence;        // the stop string that ended the text ("" otherwise)
  std::vector<int32_t> context;     // prompt + generated tokens (generate's `context`)
};

struct Event {
  enum class Kind { text, thinking, tool_call, embedding, done, error };
  Kind kind = Kind::text;
  std::string text;                 // text/thinking: a piece of the answer or the reasoning (whole UTF-8 sequences)
  ToolCall tool_call;               // tool_call: one complete call, sent as soon as it is parsed
  std::vector<TokenLogprob> logprobs;  // text/thinking/tool_call: the tokens behind this event (when asked for)
  std::vector<float> embedding;     // embedding: one per input, in order
  int embed_tokens = 0;
  DoneInfo done;
  Error error;
};

struct PreparedPrompt {
  std::vector<int32_t> tokens;
  std::string rendered;             // the prompt text after the template (for render_only)
  std::string template_override;    // the template used instead of the model's own, if any
};

struct Job {
  enum class Kind { generate, embed, load, unload };
  Kind kind = Kind::generate;
  std::string model_name;           // as the client named it (for /api/ps and logs)
  // Who asked: the web chat's client id or the bearer token's name; "" for anonymous API calls.
  // Workers serve queued jobs round-robin by user; the scheduler limits each named user's jobs.
  std::string user;
  LoadSpec spec;
  std::optional<Nanos> keep_alive;  // unset: the configured default; negative: forever

  // generate
  std::function<Result<PreparedPrompt>(const LoadedModel&)> prepare;
  Sampling sampling;
  int num_predict = -1;             // -1: until the end of generation or the context is full
  std::vector<std::string> stop;
  bool truncate = true;             // false: a prompt longer than the context is an error
  bool render_only = false;         // send the rendered prompt as text, run nothing

  // Structured output, tools, thinking, logprobs (common/engine/grammar, chat tool-call parsers).
  // The routes fill these from each API's wire fields; the worker honours them.
  std::string format;               // "" free text; "json" any JSON value; else a JSON schema (JSON text)
  std::string tools;                // JSON array of tool definitions (OpenAI shape), "" for none
  std::string tool_choice = "auto";  // "auto", "none", "required", or the name of one function
  bool parallel_tool_calls = true;
  std::optional<std::string> think;  // unset: the template's default; "true"/"false"/"low"/"medium"/"high"
  int top_logprobs = -1;            // -1: no logprobs; 0..20: logprobs with that many alternatives
  // > 0: once the reasoning block has this many tokens, the worker writes the format's end of
  // reasoning itself and the answer follows (constrained when a format or a forced call applies).
  int think_budget = 0;

  // embed
  std::vector<std::string> embed_inputs;
  std::vector<std::vector<int32_t>> embed_tokens;  // inputs given as token ids, after embed_inputs

  std::shared_ptr<Channel<Event>> out;
  Clock::time_point submitted = Clock::now();
  Nanos load_duration{0};           // set by the scheduler when this job caused the load

  bool cancelled() const { return out && out->cancelled(); }
  // Sends an event; false when the consumer is gone.
  bool send(Event e) const { return out && out->push(std::move(e)); }
  void fail(Error e) const {
    Event ev;
    ev.kind = Event::Kind::error;
    ev.error = std::move(e);
    send(std::move(ev));
    if (out) out->close();
  }
};

}  // namespace nurl::sched
