// The OpenAI-compatible API: POST /v1/chat/completions, POST /v1/completions, POST /v1/responses,
// POST /v1/embeddings, GET /v1/models, GET /v1/models/{id}. Each route parses its request
// (common/api/openai.h), builds the job through routes/inference.h and renders the job's events
// with one of the formats below (exposed for tests: they are pure functions of the events).
#pragma once

#include <cstdint>
#include <string>

#include "api/openai.h"
#include "http/router.h"
#include "routes/context.h"
#include "routes/event-stream.h"

namespace nurl {

void add_openai_routes(http::Router& r, RouteContext& ctx);

namespace v1 {

struct ReplyInfo {
  std::string id;       // chatcmpl-…, cmpl-…, resp_…
  std::string model;    // as the client named it
  int64_t created = 0;  // unix seconds
  bool include_usage = false;  // stream_options.include_usage
  bool logprobs = false;
};

// chat.completion (single) or chat.completion.chunk frames: the first delta carries the role,
// a separate last chunk the finish_reason, then (include_usage) a usage chunk with no choices.
EventFormat chat_format(const ReplyInfo& info, bool stream);

// text_completion objects; `echo` is the prompt to put in front of the text ("" for none);
// `logprobs` the legacy alternatives count (-1: none).
EventFormat completion_format(const ReplyInfo& info, bool stream, std::string echo, int logprobs);

// The Responses API: one `response` object (single), or the event sequence response.created,
// response.in_progress, output items (reasoning, message with output_text deltas, function_call
// with arguments), response.completed (or .incomplete at max_output_tokens).
struct ResponseInfo {
  ReplyInfo reply;
  api::Json request_echo;  // instructions, tools, text, temperature... as the response object repeats them
};
EventFormat responses_format(const ResponseInfo& info, bool stream);

}  // namespace v1
}  // namespace nurl
