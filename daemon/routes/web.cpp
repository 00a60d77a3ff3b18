// The web chat's routes (/web/*): the session, conversations and their export. The reply
// stream (POST /web/chat) is in web-chat.cpp, the page and its assets in web-page.cpp. Every
// handler resolves the nl_client cookie first and passes it to the history, which checks
// ownership in SQL; another client's conversation is a 404 like a missing one.
#include "routes/web.h"

#include "core/json-text.h"
#include "history/history.h"
#include "routes/web-session.h"

namespace nurl {

namespace {

constexpr size_t kMaxTitleBytes = 500;

WebJson web_body(const std::string& s) {
  return s.empty() ? WebJson::object() : parse_json(s);
}

// Optional string fields of a PATCH/POST body; an error names the field.
Result<history::ConversationPatch> conversation_fields(const WebJson& j, const Config& cfg) {
  if (!j.is_object()) return Error(Code::invalid_argument, "expected a JSON object");
  history::ConversationPatch p;
  for (auto [key, dst, limit] : {std::tuple{"title", &p.title, kMaxTitleBytes},
                                 std::tuple{"system", &p.system, static_cast<size_t>(cfg.web_max_message)},
                                 std::tuple{"model", &p.model, size_t{1000}}}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    if (!j[key].is_string()) return Error(Code::invalid_argument, std::string(key) + " must be a string");
    std::string v = j[key].get<std::string>();
    if (v.size() > limit)
      return Error(Code::invalid_argument, std::string(key) + " is longer than " + std::to_string(limit) + " bytes");
    *dst = std::move(v);
  }
  return p;
}

http::Reply too_large_or(const Error& e, const WebJson& j, const Config& cfg) {
  // An oversized system prompt is a 413 like an oversized message.
  if (j.is_object() && j.contains("system") && j["system"].is_string() &&
      j["system"].get<std::string>().size() > cfg.web_max_message)
    return http::error_response(413, "the system prompt is larger than " + std::to_string(cfg.web_max_message) +
                                         " bytes (web_max_message)");
  return http::error_response(e);
}

std::string query_param(const std::string& query, const std::string& name) {
  size_t i = 0;
  while (i <= query.size()) {
    size_t end = query.find('&', i);
    if (end == std::string::npos) end = query.size();
    std::string part = query.substr(i, end - i);
    auto eq = part.find('=');
    if (part.substr(0, eq) == name) return eq == std::string::npos ? "" : url_decode(part.substr(eq + 1));
    i = end + 1;
  }
  return "";
}

std::string markdown_export(const history::Conversation& c, const std::vector<history::Message>& msgs) {
  std::string out = "# " + (c.title.empty() ? std::string("Conversation") : c.title) + "\n\n";
  if (!c.model.empty()) out += "Model: " + c.model + "\n\n";
  if (!c.system.empty()) out += "## System\n\n" + c.system + "\n\n";
  for (const auto& m : msgs) {
    std::string who = m.role == "user" ? "User" : m.role == "assistant" ? "Assistant" : "System";
    if (m.role == "assistant" && !m.model.empty()) who += " (" + m.model + ")";
    out += "## " + who + "\n\n";
    if (!m.thinking.empty()) {
      out += "<details><summary>Thinking</summary>\n\n";
      // Quoted so the export's own Markdown cannot be closed from inside the reasoning.
      size_t i = 0;
      while (i < m.thinking.size()) {
        size_t nl = m.thinking.find('\n', i);
        if (nl == std::string::npos) nl = m.thinking.size();
        out += "> " + m.thinking.substr(i, nl - i) + "\n";
        i = nl + 1;
      }
      out += "\n</details>\n\n";
    }
    out += m.content + "\n\n";
    if (m.state == "incomplete") out += "_(incomplete)_\n\n";
    if (m.state == "error") out += "_(error: " + m.error + ")_\n\n";
  }
  return out;
}

// {"conversation": …, "messages": […]}: what the page shows and the JSON export.
Result<WebJson> conversation_document(history::History& h, const std::string& client, const std::string& id) {
  NURL_ASSIGN(auto conv, h.get_conversation(client, id));
  NURL_ASSIGN(auto msgs, h.messages(client, id));
  WebJson arr = WebJson::array();
  for (const auto& m : msgs) arr.push_back(message_json(m));
  return WebJson{{"conversation", conversation_json(conv)}, {"messages", arr}};
}

// A file name for Content-Disposition: the title's letters and digits.
std::string export_name(const history::Conversation& c, const char* ext) {
  std::string n;
  for (char ch : c.title)
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') n += ch;
    else if (ch == ' ' && !n.empty() && n.back() != '-') n += '-';
  if (n.empty()) n = "conversation";
  if (n.size() > 60) n.resize(60);
  return n + "." + ext;
}

}  // namespace

WebJson conversation_json(const history::Conversation& c) {
  return {{"id", c.id},         {"title", c.title},           {"model", c.model},
          {"system", c.system}, {"created_at", c.created_at}, {"updated_at", c.updated_at}};
}

WebJson message_json(const history::Message& m) {
  WebJson options = parse_json(m.options);
  WebJson timings = parse_json(m.timings);
  return {{"id", m.id},
          {"role", m.role},
          {"content", m.content},
          {"thinking", m.thinking},
          {"model", m.model},
          {"options", options.is_discarded() ? WebJson::object() : options},
          {"timings", timings.is_discarded() ? WebJson::object() : timings},
          {"state", m.state},
          {"error", m.error},
          {"trimmed", m.trimmed},
          {"created_at", m.created_at}};
}

std::string url_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') out += ' ';
    else if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
             std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

void add_web_routes(http::Router& r, RouteContext& ctx) {
  add_web_page_routes(r, ctx);

  r.add("GET", "/web/session", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient&, const Config& cfg) -> http::Reply {
      WebJson j = {{"access", cfg.access_tokens ? "tokens" : "open"},
                   {"token", req.token_name.empty() ? WebJson(nullptr) : WebJson(req.token_name)},
                   {"default_model", cfg.default_model},
                   {"max_message", cfg.web_max_message}};
      return web_json(200, j);
    });
  });

  r.add("GET", "/web/conversations", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config&) -> http::Reply {
      auto list = ctx.history->list_conversations(c.id, query_param(req.query, "q"));
      if (!list.ok()) return http::error_response(list.error());
      WebJson arr = WebJson::array();
      for (const auto& conv : *list) arr.push_back(conversation_json(conv));
      return web_json(200, {{"conversations", arr}});
    });
  });

  r.add("POST", "/web/conversations", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config& cfg) -> http::Reply {
      WebJson j = web_body(req.body);
      auto p = conversation_fields(j, cfg);
      if (!p.ok()) return too_large_or(p.error(), j, cfg);
      auto conv = ctx.history->create_conversation(c.id, p->title.value_or(""), p->model.value_or(cfg.default_model),
                                                   p->system.value_or(""));
      if (!conv.ok()) return http::error_response(conv.error());
      return web_json(201, conversation_json(*conv));
    });
  });

  r.add("GET", "/web/conversations/:id/messages", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config&) -> http::Reply {
      auto doc = conversation_document(*ctx.history, c.id, req.params.at("id"));
      if (!doc.ok()) return http::error_response(doc.error());
      return web_json(200, *doc);
    });
  });

  r.add("PATCH", "/web/conversations/:id", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config& cfg) -> http::Reply {
      WebJson j = web_body(req.body);
      auto p = conversation_fields(j, cfg);
      if (!p.ok()) return too_large_or(p.error(), j, cfg);
      auto conv = ctx.history->update_conversation(c.id, req.params.at("id"), *p);
      if (!conv.ok()) return http::error_response(conv.error());
      return web_json(200, conversation_json(*conv));
    });
  });

  r.add("DELETE", "/web/conversations/:id", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config&) -> http::Reply {
      auto res = ctx.history->delete_conversation(c.id, req.params.at("id"));
      if (!res.ok()) return http::error_response(res.error());
      return web_json(200, {{"deleted", req.params.at("id")}});
    });
  });

  r.add("GET", "/web/conversations/:id/export", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config&) -> http::Reply {
      const std::string& id = req.params.at("id");
      auto conv = ctx.history->get_conversation(c.id, id);
      if (!conv.ok()) return http::error_response(conv.error());
      const std::string format = query_param(req.query, "format");
      http::Response res;
      if (format == "markdown" || format == "md") {
        auto msgs = ctx.history->messages(c.id, id);
        if (!msgs.ok()) return http::error_response(msgs.error());
        res.content_type = "text/markdown; charset=utf-8";
        res.body = markdown_export(*conv, *msgs);
        res.headers.push_back({"Content-Disposition", "attachment; filename=\"" + export_name(*conv, "md") + "\""});
      } else if (format.empty() || format == "json") {
        auto doc = conversation_document(*ctx.history, c.id, id);
        if (!doc.ok()) return http::error_response(doc.error());
        res.body = web_dump(*doc);
        res.headers.push_back({"Content-Disposition", "attachment; filename=\"" + export_name(*conv, "json") + "\""});
      } else {
        return http::error_response(400, "format \"" + format + "\" is not json or markdown");
      }
      return res;
    });
  });

  add_web_chat_routes(r, ctx);
}

}  // namespace nurl
