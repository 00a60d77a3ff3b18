// The scheduler's seam to the engine. The scheduler and routes see models only through these
// interfaces, so their tests run with fakes (no model files); engine-loader.cpp adapts the real
// engine. Threading: LoadedModel's const methods are thread-safe; a BatchRunner (the KV cache of
// n_slots sequences) is used by its model's worker thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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
};

struct ModelFacts {
  std::string architecture;  // "llama", "qwen2", ...
  uint64_t size_bytes = 0;   // weights (file size)
  int n_ctx_train = 0;
  bool can_embed = false;
  bool has_chat_template = false;  // tokenizer.chat_template present
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
  virtual Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special) const = 0;
  virtual std::string token_text(int32_t id) const = 0;  // the piece's bytes (may be partial UTF-8)
  virtual bool is_end_of_generation(int32_t id) const = 0;
  // Renders messages with the model's chat template, or `template_override` (Jinja) when set.
  virtual Result<std::string> render_chat(const std::vector<ChatMessage>& messages,
                                          const std::string& template_override,
                                          bool add_generation_prompt) const = 0;
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
