// The Anthropic Messages API: POST /v1/messages (a `message` object, or the event stream
// message_start, content_block_start/delta/stop per block, message_delta, message_stop) and
// POST /v1/messages/count_tokens. Translated onto the same scheduler jobs as every route.
#pragma once

#include <string>

#include "api/anthropic.h"
#include "http/router.h"
#include "routes/context.h"
#include "routes/event-stream.h"
#include "routes/inference.h"

namespace nurl {

void add_anthropic_routes(http::Router& r, RouteContext& ctx);

namespace anthropic {

struct MessageInfo {
  std::string id;     // msg_…
  std::string model;  // as the client named it
};

// Blocks open as the events arrive: thinking, text, one tool_use per tool call. stop_reason:
// tool_use, stop_sequence, max_tokens or end_turn.
EventFormat messages_format(const MessageInfo& info, bool stream);

// The request as a job (model resolved, sampling, tools, thinking, the conversation's prepare).
Result<Inference> begin_messages(RouteContext& ctx, const http::Request& req, const api::anthropic::MessagesRequest& q);

}  // namespace anthropic
}  // namespace nurl
