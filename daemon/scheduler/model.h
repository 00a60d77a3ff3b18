// The scheduler's seam to the engine. The scheduler and routes see models only through these
// interfaces, so their tests run with fakes (no model files); engine-loader.cpp adapts the real
// engine. Threading: LoadedModel's const methods are thread-safe; a BatchRunner (the KV cache of
// n_slots sequences) is used by its model's worker thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl::sched {

// What the sampler needs; defaults are ollama's.
struct Sampling {
  float temperature = 0.8f;
  int top_k = 40;
  float top_p = 0.9f;
  float min_p = 0.0f;
  float typical_p = 1.0f;
  float repeat_penalty = 1.1f;
  int repeat_last_n = 64;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0;
  bool seed_set = false;  // false: a random seed per request
  int top_logprobs = -1;  // -1: no log-probabilities; 0..20: with that many alternatives
};

struct ModelFacts {
  std::string architecture;  // "llama", "qwen2", ...
  uint64_t size_bytes = 0;   // weights (file size)
  int n_ctx_train = 0;
  bool can_embed = false;
  bool has_chat_template = false;  // tokenizer.chat_template present
  bool tools = false;              // the template takes tools and writes calls in a format we parse
  bool thinking = false;           // the template's replies carry reasoning blocks
  std::string tool_format;         // the reply format rows chosen from the template ("" none), for logs
  std::string think_format;
  std::string kernels;  // the CPU kernels and packed weights, for logs ("avx512, 374 MiB packed")
};

// A tool call the model made, parsed from its output by the template's tool-call format.
struct ToolCall {
  std::string id;         // "call_…", unique within the reply (OpenAI/Anthropic need one)
  std::string name;       // the function's name
  std::string arguments;  // the arguments object as JSON text
  int index = 0;          // position among this reply's calls, from 0
};

struct ChatMessage {
  ChatMessage() = default;
  ChatMessage(std::string r, std::string c) : role(std::move(r)), content(std::move(c)) {}

  std::string role;
  std::string content;
  std::string thinking;                    // an earlier assistant turn's reasoning
  std::vector<ToolCall> tool_calls;         // an earlier assistant turn's calls
  std::string tool_name;                   // role "tool": which function this result answers
  std::string tool_call_id;                // role "tool": which call this result answers
};

struct SlotToken {
  int slot = 0;
  int32_t token = 0;
};

// A chunk of a slot's prompt for BatchRunner::step.
struct SlotPrompt {
  int slot = 0;
  std::span<const int32_t> tokens;
  bool want_next = false;
};

// A sampled token and its log-probability under the distribution it was drawn from, with the
// most likely alternatives of that distribution (Sampling::top_logprobs of them).
struct TokenChoice {
  int32_t id = 0;
  float logprob = 0;
};
struct SampledLogprobs {
  TokenChoice chosen;
  std::vector<TokenChoice> top;
};

// How a conversation is rendered: the model's template (or an override), the request's tools
// (JSON array text, OpenAI shape) and thinking switch (as Job::think).
struct ChatRender {
  std::string template_override;
  bool add_generation_prompt = true;
  std::string tools;
  std::optional<std::string> think;
};

// Structured output for one sequence: a grammar compiled by the engine against the model's
// vocabulary (LoadedModel::compile_constraint). Opaque here; BatchRunner::constrain applies it.
class OutputConstraint {
 public:
  virtual ~OutputConstraint() = default;
};

struct ConstraintRequest {
  std::string template_override;  // the template in use when not the model's own (its call format)
  std::string format;       // Job::format ("" none)
  std::string tools;        // Job::tools, when tool_choice forces a call
  std::string tool_choice;  // "required" or a function name; anything else forces nothing
  bool parallel_tool_calls = true;
};

// One piece of a reply as its template family writes it: text, reasoning, or a complete call.
struct ReplyPiece {
  enum class Kind { text, thinking, tool_call };
  Kind kind = Kind::text;
  std::string text;
  ToolCall call;  // id, name, arguments; the worker numbers them
};

// Splits a reply into text, reasoning and tool calls while it streams (the engine's chat reply
// parser). One per job; fed the text after stop-sequence handling.
class ReplyParser {
 public:
  virtual ~ReplyParser() = default;
  virtual void push(std::string_view text, std::vector<ReplyPiece>& out) = 0;
  virtual void finish(std::vector<ReplyPiece>& out) = 0;
  virtual bool thinking() const = 0;  // inside a reasoning block now
  virtual bool thought() const = 0;   // a reasoning block was closed
  // Control-token texts the parser reads (markers): such tokens are printed into its input.
  virtual const std::vector<std::string>& markers() const = 0;
  // Starts a reasoning block (the worker then adds the returned opener to the prompt); "" when
  // the format has none.
  virtual std::string open_thinking() = 0;
  // The text that ends a reasoning block ("" when the format has none): the worker writes it
  // when a thinking budget is spent.
  virtual std::string close_thinking_text() const { return {}; }
};

struct ReplyRequest {
  std::string template_override;  // the template in use when not the model's own
  std::string rendered;  // the prompt as rendered: where it leaves the model
  std::string tools;     // tools whose calls are parsed ("" none)
  bool constrained_answer = false;  // a format constraint: the answer is data, calls are not parsed
};

class BatchRunner {
 public:
  virtual ~BatchRunner() = default;
  virtual int n_slots() const = 0;
  virtual int n_ctx() const = 0;  // per slot
  // Empties the slot's cache and seeds its sampler.
  virtual void reset(int slot, const Sampling& s) = 0;
  // Appends `tokens` to the slot's cache. With want_next, samples the next token from the last
  // position and returns it; otherwise returns -1.
  virtual Result<int32_t> prefill(int slot, std::span<const int32_t> tokens, bool want_next) = 0;
  // One batched decode step: each entry appends its token to its slot; next[i] is the token
  // sampled for batch[i]. Each slot's result equals what it would give decoded alone.
  virtual Result<void> decode(std::span<const SlotToken> batch, std::span<int32_t> next) = 0;
  // decode(batch) and a prefill of every prompt chunk in one step: prompt_next[i] is what
  // prefill(prompts[i]) would return. A runner that can runs them as one forward, reading the
  // weights once for all; an error then fails the whole step. This default runs them one by one.
  virtual Result<void> step(std::span<const SlotPrompt> prompts, std::span<int32_t> prompt_next,
                            std::span<const SlotToken> batch, std::span<int32_t> next) {
    for (size_t i = 0; i < prompts.size(); ++i) {
      NURL_ASSIGN(prompt_next[i], prefill(prompts[i].slot, prompts[i].tokens, prompts[i].want_next));
    }
    if (batch.empty()) return ok();
    return decode(batch, next);
  }
  // Constrains the slot's sampling until the next reset: from the first sampled token when
  // `now`, else from the token after activate_constraint() (a reasoning block comes first).
  virtual Result<void> constrain(int slot, std::shared_ptr<const OutputConstraint> c, bool now) {
    (void)slot, (void)c, (void)now;
    return Error(Code::unsupported, "structured output is not supported by this model runner");
  }
  virtual void activate_constraint(int slot) { (void)slot; }
  // At most `draws` more tokens will be sampled for the slot (num_predict, the context's room),
  // the last of which can only end the generation: a constrained slot then completes its
  // document within them. Error (invalid_argument, naming the tokens needed) when the
  // constraint's shortest document cannot fit.
  virtual Result<void> limit_tokens(int slot, int draws) {
    (void)slot, (void)draws;
    return ok();
  }
  // Log-probabilities of the token last sampled for the slot, when Sampling::top_logprobs >= 0.
  virtual const SampledLogprobs* last_logprobs(int slot) const {
    (void)slot;
    return nullptr;
  }
  // Mean-pooled, normalised embedding of `tokens` using the slot's cache (reset first).
  virtual Result<std::vector<float>> embed(int slot, std::span<const int32_t> tokens) {
    (void)slot, (void)tokens;
    return Error(Code::unsupported, "this model does not support embeddings");
  }
};

class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  virtual const ModelFacts& facts() const = 0;
  // The facts with tools and thinking as `template_override` supports them ("" = the model's own).
  virtual ModelFacts template_facts(const std::string& template_override) const {
    (void)template_override;
    return facts();
  }
  virtual Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special) const = 0;
  virtual std::string token_text(int32_t id) const = 0;  // the piece's bytes (may be partial UTF-8)
  virtual bool is_end_of_generation(int32_t id) const = 0;
  // The text of a control token (token_text prints nothing for those), "" for other tokens.
  virtual std::string control_text(int32_t id) const {
    (void)id;
    return {};
  }
  // Renders messages with the model's chat template, or the override (Jinja) when set, with the
  // request's tools and thinking switch.
  virtual Result<std::string> render_chat(const std::vector<ChatMessage>& messages, const ChatRender& opts) const = 0;
  Result<std::string> render_chat(const std::vector<ChatMessage>& messages, const std::string& template_override,
                                  bool add_generation_prompt) const {
    ChatRender r;
    r.template_override = template_override;
    r.add_generation_prompt = add_generation_prompt;
    return render_chat(messages, r);
  }
  // The reply parser of this model's template family; null: every reply is plain text.
  virtual std::unique_ptr<ReplyParser> reply_parser(const ReplyRequest& r) const {
    (void)r;
    return nullptr;
  }
  // Compiles a format / forced tool call against the vocabulary. Errors: invalid_argument naming
  // what cannot be compiled.
  virtual Result<std::shared_ptr<const OutputConstraint>> compile_constraint(const ConstraintRequest& r) const {
    (void)r;
    return Error(Code::unsupported, "structured output is not supported by this model");
  }
  virtual Result<std::unique_ptr<BatchRunner>> make_runner(int n_slots, int n_ctx) = 0;
};

// How a model is loaded: identified by the file and the shape of its cache.
struct LoadSpec {
  std::string path;    // the GGUF file
  int n_ctx = 4096;    // per sequence
  int n_parallel = 1;  // sequences batched together

  bool operator==(const LoadSpec&) const = default;
};

struct ModelLoader {
  std::function<Result<std::shared_ptr<LoadedModel>>(const LoadSpec&)> load;
  // Bytes the model will hold resident (weights + caches); used against the memory budget.
  std::function<Result<uint64_t>(const LoadSpec&)> estimate;
};

}  // namespace nurl::sched
