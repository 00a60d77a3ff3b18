// OpenAI-compatible wire types (/v1/chat/completions, /v1/completions, /v1/embeddings,
// /v1/responses) ⇄ JSON. Parsing is strict: a wrong type or an out-of-range value is an Error
// naming the field (400), as OpenAI answers; unknown fields are ignored (clients send vendor
// extensions). Sampling fields land in the ollama Options, so every route shares one path to the
// scheduler. Extensions accepted beside OpenAI's fields, as ollama does: `options` (any ollama
// option, e.g. num_ctx; the top-level OpenAI fields win), `keep_alive`, `truncate`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/chat-turn.h"
#include "api/json-fields.h"
#include "api/ollama.h"
#include "core/duration.h"
#include "core/error.h"

namespace nurl::api::openai {

// What every generating request carries.
struct Common {
  std::string model;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  Options options;             // temperature, top_p, seed, stop, penalties, max tokens → num_predict, options{}
  std::optional<Nanos> keep_alive;
  bool truncate = true;
  StructuredFields structured;
  std::vector<std::string> ignored_options;  // names in options{} that have no effect
};

struct ChatRequest {
  Common common;
  std::vector<ChatTurn> messages;
};

struct CompletionRequest {
  Common common;
  std::string prompt;
  std::string suffix;
  bool echo = false;
  int logprobs = -1;  // the legacy integer: alternatives per token, -1 none
};

struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> inputs;                 // text inputs, or
  std::vector<std::vector<int32_t>> token_inputs;  // token-id inputs (never both)
  bool base64 = false;                             // encoding_format "base64"
  std::optional<int> dimensions;
  Options options;
  std::optional<Nanos> keep_alive;
  bool truncate = true;
};

struct ResponsesRequest {
  Common common;
  std::string instructions;      // a system message before the input
  std::vector<ChatTurn> input;
};

Result<ChatRequest> parse_chat_request(std::string_view body);
Result<CompletionRequest> parse_completion_request(std::string_view body);
Result<EmbeddingRequest> parse_embedding_request(std::string_view body);
Result<ResponsesRequest> parse_responses_request(std::string_view body);

// OpenAI's error object for a status: {"error":{"message","type","param","code"}}. The type
// follows the status (400 invalid_request_error, 404 not_found_error, 5xx server_error, ...);
// `code` is "model_not_found" for 404s about models.
Json error_body(int status, const std::string& message);

}  // namespace nurl::api::openai
