// The web chat: the page at "/" (browsers) with its assets, and the /web/* API it speaks:
//   GET    /web/session                       access mode, the token's name, the default model
//   GET    /web/conversations?q=TEXT          this client's conversations, newest first
//   POST   /web/conversations                 {title?, model?, system?} → 201
//   GET    /web/conversations/:id/messages    {conversation, messages}
//   PATCH  /web/conversations/:id             {title?, system?, model?}
//   DELETE /web/conversations/:id
//   GET    /web/conversations/:id/export?format=json|markdown
//   POST   /web/chat                          {conversation, content | regenerate, model?, options?}
//                                             → NDJSON (or SSE with Accept: text/event-stream)
// Identity is the nl_client cookie (web-session.h); access control and CSRF are the pipeline's.
#pragma once

#include <string>

#include "http/router.h"
#include "routes/context.h"
#include "routes/web-session.h"

namespace nurl {

namespace history {
struct Conversation;
struct Message;
}  // namespace history

void add_web_routes(http::Router& r, RouteContext& ctx);

// Parts, registered by add_web_routes().
void add_web_page_routes(http::Router& r, RouteContext& ctx);  // web-page.cpp
void add_web_chat_routes(http::Router& r, RouteContext& ctx);  // web-chat.cpp

// "/" for a browser: the page (basic.cpp asks browser_wants_page() first).
bool browser_wants_page(const http::Request& req);
http::Reply web_index(const http::Request& req);

WebJson conversation_json(const history::Conversation& c);
WebJson message_json(const history::Message& m);
std::string url_decode(const std::string& s);

// Runs `f(client, config)` for the request's client and sets the cookie on whatever it answers.
template <class F>
http::Reply with_client(RouteContext& ctx, const http::Request& req, F f) {
  if (!ctx.history) return http::error_response(503, "the web chat history is not available (see the daemon log)");
  auto client = web_client(req);
  if (!client.ok()) return http::error_response(client.error());
  auto cfg = ctx.config.get();
  http::Reply reply = f(*client, *cfg);
  attach_cookie(reply, *client, request_is_secure(req, *cfg));
  return reply;
}

}  // namespace nurl
