// What the OpenAI-compatible routes share (openai-chat.cpp, openai-completions.cpp,
// openai-responses.cpp, openai-models.cpp): errors in OpenAI's shape, ids, usage, finish
// reasons, logprobs, and the one way a /v1 job is submitted and streamed (SSE, `data:` frames).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/openai.h"
#include "routes/context.h"
#include "routes/event-stream.h"
#include "http/router.h"
#include "routes/inference.h"

namespace nurl::v1 {

using api::Json;

// OpenAI's error reply for an Error (the status of its code).
http::Response error_reply(const Error& e);
// The error object's JSON text (an ErrorBody for sse_stream).
std::string error_text(int status, const std::string& message);

// "<prefix><24 random letters and digits>": chatcmpl-…, cmpl-…, resp_…, msg_…
std::string random_id(std::string_view prefix);
int64_t unix_now();

// "tool_calls" when the reply made calls, "length" when it hit max_tokens or the context, else "stop".
std::string finish_reason(const ReplyAggregate& agg, const sched::DoneInfo& done);
// {"prompt_tokens","completion_tokens","total_tokens"}
Json usage(const sched::DoneInfo& done);
// Chat logprobs: [{"token","logprob","bytes","top_logprobs":[{"token","logprob","bytes"}]}]
Json logprobs_content(const std::vector<sched::TokenLogprob>& lps);
// [{"id","type":"function","function":{"name","arguments"}}], with "index" for stream deltas.
Json tool_calls(const std::vector<sched::ToolCall>& calls, bool with_index);

InferenceParams inference_params(const api::openai::Common& c);

// Resolves the model and builds the job (begin_inference), with the structured fields applied;
// errors already in OpenAI's shape.
Result<Inference> begin(RouteContext& ctx, const http::Request& req, const api::openai::Common& c);

// Submits the job and returns its reply: SSE with `data:` frames and `[DONE]` when streaming,
// else one JSON body; every error in OpenAI's shape.
http::Reply submit(RouteContext& ctx, const std::shared_ptr<sched::Job>& job, EventFormat fmt, bool stream,
                   Framing framing = sse_data_framing());

// Each file's routes; add_openai_routes() (routes/openai.h) registers them all.
void add_chat_routes(http::Router& r, RouteContext& ctx);
void add_completion_routes(http::Router& r, RouteContext& ctx);
void add_responses_routes(http::Router& r, RouteContext& ctx);
void add_model_routes(http::Router& r, RouteContext& ctx);

}  // namespace nurl::v1
