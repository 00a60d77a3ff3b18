// Anthropic Messages API wire types (/v1/messages, /v1/messages/count_tokens) ⇄ JSON. Strict
// like the OpenAI parser: wrong types and out-of-range values are an Error naming the field;
// unknown fields are ignored. Content blocks (text, tool_use, tool_result, thinking) become
// ChatTurns: tool_result blocks turn into "tool" turns, tool_use into an assistant's calls, and
// tools into the scheduler's (OpenAI-shaped) tool list. Extensions as on /v1: `options`,
// `keep_alive`, `truncate`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/chat-turn.h"
#include "api/json-fields.h"
#include "api/ollama.h"
#include "core/duration.h"

namespace nurl::api::anthropic {

struct MessagesRequest {
  std::string model;
  bool stream = false;
  Options options;  // max_tokens → num_predict, temperature, top_p, top_k, stop_sequences → stop
  std::optional<Nanos> keep_alive;
  bool truncate = true;
  std::vector<ChatTurn> messages;  // the system prompt first, when given
  StructuredFields structured;     // tools, tool_choice, thinking
  std::vector<std::string> ignored_options;
};

Result<MessagesRequest> parse_messages_request(std::string_view body);
// count_tokens takes the same body without max_tokens.
Result<MessagesRequest> parse_count_tokens_request(std::string_view body);

// {"type":"error","error":{"type","message"}} with Anthropic's type for the status
// (invalid_request_error, not_found_error, request_too_large, overloaded_error, api_error, ...).
Json error_body(int status, const std::string& message);

}  // namespace nurl::api::anthropic
