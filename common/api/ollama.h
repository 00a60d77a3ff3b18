// ollama API wire types ⇄ JSON, with ollama's field names. Parsing is strict about types
// (a string where a number belongs is an Error naming the field) and lenient about unknown
// fields (ignored) and unknown options (reported to the caller, which logs them).
// Shared by the daemon (parses requests, builds responses) and the client.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.h"
#include "core/error.h"

namespace nurl::api {

using Json = nlohmann::json;

// The runtime options clients send in "options" (and Modelfile PARAMETERs). Unset = default.
struct Options {
  std::optional<int> num_ctx, num_predict, top_k, repeat_last_n, num_keep, num_batch;
  std::optional<int64_t> seed;
  std::optional<double> temperature, top_p, min_p, typical_p, repeat_penalty, presence_penalty, frequency_penalty;
  std::optional<std::vector<std::string>> stop;

  // Overlays the set fields of `o` onto this.
  void merge(const Options& o);
  Json to_json() const;
};

// Parses an "options" object. Wrong types → invalid_argument naming the option. Options that
// are known to ollama but not used here, and unknown names, are appended to `ignored`.
Result<Options> parse_options(const Json& j, std::vector<std::string>* ignored);

// A tool call in a message (ollama: {"id"?, "function": {"index"?, "name", "arguments": {...}}}).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON object text
  int index = 0;
};

struct Message {
  std::string role;
  std::string content;
  std::vector<std::string> images;  // base64; accepted, not used by text models
  std::string thinking;             // an earlier assistant turn's reasoning
  std::vector<ToolCall> tool_calls; // an earlier assistant turn's calls
  std::string tool_name;            // role "tool": the function whose result this is
  std::string tool_call_id;
};

// Structured output, thinking and log-probabilities, shared by generate and chat.
struct OutputOptions {
  std::string format;               // "" free text, "json", or a JSON schema (JSON text, key order kept)
  std::optional<std::string> think; // "true", "false", "low", "medium", "high"
  int top_logprobs = -1;            // -1: none; 0..20 with logprobs (or top_logprobs) asked for
};

struct GenerateRequest {
  std::string model;
  std::string prompt, suffix, system, template_override;
  std::vector<int32_t> context;
  std::vector<std::string> images;
  bool stream = true;
  bool raw = false;
  std::optional<Nanos> keep_alive;
  Options options;
  bool truncate = true;
  bool debug_render_only = false;
  OutputOptions output;
};

struct ChatRequest {
  std::string model;
  std::vector<Message> messages;
  bool stream = true;
  std::optional<Nanos> keep_alive;
  Options options;
  bool truncate = true;
  bool debug_render_only = false;
  OutputOptions output;
  std::string tools;  // JSON array text (OpenAI shape, key order kept), "" for none
};

struct EmbedRequest {
  std::string model;
  std::vector<std::string> input;
  bool input_was_list = true;  // legacy /api/embeddings sends one "prompt"
  bool truncate = true;
  std::optional<Nanos> keep_alive;
  Options options;
  std::optional<int> dimensions;
};

struct ShowRequest {
  std::string model;
  bool verbose = false;
};

// Each parser: empty body → "missing request body"; bad JSON → the parser's message; a missing
// model → "model is required". `ignored_options` collects option names that have no effect.
Result<GenerateRequest> parse_generate_request(std::string_view body, std::vector<std::string>* ignored_options);
Result<ChatRequest> parse_chat_request(std::string_view body, std::vector<std::string>* ignored_options);
Result<EmbedRequest> parse_embed_request(std::string_view body, bool legacy, std::vector<std::string>* ignored_options);
Result<ShowRequest> parse_show_request(std::string_view body);
// Just the model name ("model", or "name" for older clients), for simple routes.
Result<std::string> parse_model_field(std::string_view body);

// keep_alive: a number of seconds or a duration string; negative = forever.
Result<Nanos> parse_keep_alive(const Json& v);

// The ollama fields the OpenAI and Anthropic routes accept as extensions: "options" (into
// `options`, unused names into `ignored`), "keep_alive" and "truncate".
Result<void> parse_ollama_extensions(const Json& j, Options* options, std::optional<Nanos>* keep_alive, bool* truncate,
                                     std::vector<std::string>* ignored);

// RFC 3339 with nanoseconds in UTC, as Go prints time.Time: "2024-05-01T12:00:00.123456789Z".
std::string format_time(std::chrono::system_clock::time_point t);

}  // namespace nurl::api
