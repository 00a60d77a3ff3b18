#include "api/anthropic.h"

#include <algorithm>

namespace nurl::api::anthropic {

namespace {

constexpr int64_t kMinThinkingBudget = 1024;  // Anthropic's floor for budget_tokens

Result<std::string> block_text(const Json& content, const std::string& where) {
  return joined_text(content, where, {"text"});
}

// One message; tool_result blocks become their own "tool" turns, placed before the user's text.
Result<void> message(const Json& m, const std::string& where, std::vector<ChatTurn>* out) {
  if (!m.is_object()) return bad_field(where, "a message object with role and content");
  ChatTurn t;
  NURL_TRY(get_string(m, "role", &t.role));
  if (t.role != "user" && t.role != "assistant")
    return Error(Code::invalid_argument, where + ".role: \"" + t.role + "\" is not one of user, assistant");
  const Json* content = field(m, "content");
  if (!content) return bad_field(where + ".content", "a string or an array of content blocks");
  if (content->is_string()) {
    t.content = content->get<std::string>();
    out->push_back(std::move(t));
    return ok();
  }
  if (!content->is_array()) return bad_field(where + ".content", "a string or an array of content blocks");
  for (size_t i = 0; i < content->size(); ++i) {
    const Json& b = (*content)[i];
    const std::string at = where + ".content[" + std::to_string(i) + "]";
    const std::string type = string_or(b, "type");
    if (type == "text") {
      std::string text;
      NURL_TRY(get_string(b, "text", &text));
      if (!t.content.empty()) t.content += "\n";
      t.content += text;
    } else if (type == "tool_use" && t.role == "assistant") {
      ToolCallTurn c;
      NURL_TRY(get_string(b, "id", &c.id));
      NURL_TRY(get_string(b, "name", &c.name));
      if (c.id.empty() || c.name.empty()) return bad_field(at, "a tool_use block with id and name");
      const Json* input = field(b, "input");
      if (input && !input->is_object()) return bad_field(at + ".input", "an object");
      c.arguments = input ? dump(*input) : "{}";
      t.tool_calls.push_back(std::move(c));
    } else if (type == "tool_result" && t.role == "user") {
      ChatTurn r;
      r.role = "tool";
      NURL_TRY(get_string(b, "tool_use_id", &r.tool_call_id));
      if (r.tool_call_id.empty()) return bad_field(at + ".tool_use_id", "the id of the tool_use this answers");
      if (const Json* c = field(b, "content")) {
        NURL_ASSIGN(r.content, block_text(*c, at + ".content"));
      }
      bool is_error = false;
      NURL_TRY(get_bool(b, "is_error", &is_error));
      if (is_error) r.content = "Error: " + r.content;
      out->push_back(std::move(r));
    } else if (type == "thinking" && t.role == "assistant") {
      std::string thinking;
      NURL_TRY(get_string(b, "thinking", &thinking));
      t.thinking += thinking;
    } else if (type == "redacted_thinking" && t.role == "assistant") {
      continue;
    } else {
      return Error(Code::invalid_argument, at + ": \"" + type + "\" blocks are not supported in " + t.role +
                                               " messages" +
                                               (type == "image" || type == "document"
                                                    ? " (this server runs text models)"
                                                    : ""));
    }
  }
  if (!t.content.empty() || !t.tool_calls.empty() || !t.thinking.empty() || t.role == "assistant")
    out->push_back(std::move(t));
  return ok();
}

// The tools, from the body's ordered parse (see function_tool).
Result<void> tools(const OrderedJson& j, StructuredFields* s) {
  if (const OrderedJson* ts = field(j, "tools")) {
    if (!ts->is_array()) return bad_field("tools", "an array of tools");
    OrderedJson out = OrderedJson::array();
    for (size_t i = 0; i < ts->size(); ++i) {
      const OrderedJson& t = (*ts)[i];
      const std::string at = "tools[" + std::to_string(i) + "]";
      if (!t.is_object()) return bad_field(at, "a tool {name, description, input_schema}");
      const std::string type = t.contains("type") ? string_or(t, "type", "?") : "custom";
      if (type != "custom")
        return Error(Code::invalid_argument, at + ": tools of type \"" + type + "\" are not supported (only custom)");
      const OrderedJson* schema = field(t, "input_schema");
      if (!schema) return bad_field(at + ".input_schema", "a JSON schema object");
      NURL_ASSIGN(OrderedJson tool, function_tool(field(t, "name"), field(t, "description"), schema, at));
      out.push_back(std::move(tool));
    }
    if (!out.empty()) s->tools = dump(out);
  }
  return ok();
}

Result<void> tool_choice(const Json& j, StructuredFields* s) {
  if (const Json* c = field(j, "tool_choice")) {
    const char* want = "{\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}";
    if (!c->is_object()) return bad_field("tool_choice", want);
    std::string type;
    NURL_TRY(get_string(*c, "type", &type));
    if (type == "auto" || type == "none") s->tool_choice = type;
    else if (type == "any") s->tool_choice = "required";
    else if (type == "tool") {
      NURL_TRY(get_string(*c, "name", &s->tool_choice));
      if (s->tool_choice.empty()) return bad_field("tool_choice.name", "the tool's name");
    } else {
      return bad_field("tool_choice", want);
    }
    bool disable_parallel = false;
    NURL_TRY(get_bool(*c, "disable_parallel_tool_use", &disable_parallel));
    s->parallel_tool_calls = !disable_parallel;
  }
  return check_tool_choice(*s);
}

// As Anthropic validates it: budget_tokens is required, at least 1024 and below max_tokens
// (thinking is part of the output). The worker closes the reasoning block at the budget.
Result<void> thinking(const Json& j, std::optional<int64_t> max_tokens, StructuredFields* s) {
  const Json* t = field(j, "thinking");
  if (!t) return ok();
  if (!t->is_object()) return bad_field("thinking", "{\"type\": \"enabled\", \"budget_tokens\": N} or {\"type\": \"disabled\"}");
  std::string type;
  NURL_TRY(get_string(*t, "type", &type));
  if (type == "enabled") {
    std::optional<int64_t> budget;
    NURL_TRY(get_integer(*t, "budget_tokens", INT64_MIN, INT64_MAX, &budget));
    if (!budget) return Error(Code::invalid_argument, "thinking.budget_tokens: Field required");
    if (*budget < kMinThinkingBudget)
      return Error(Code::invalid_argument, "thinking.budget_tokens: must be at least " +
                                               std::to_string(kMinThinkingBudget) + ", got " + std::to_string(*budget));
    if (max_tokens && *max_tokens <= *budget)
      return Error(Code::invalid_argument, "max_tokens must be greater than thinking.budget_tokens (" +
                                               std::to_string(*max_tokens) + " <= " + std::to_string(*budget) +
                                               "): the thinking is part of the output");
    s->think = "true";
    s->think_budget = static_cast<int>(std::min<int64_t>(*budget, 1 << 30));
  } else if (type == "disabled") {
    s->think = "false";
  } else {
    return bad_field("thinking.type", "\"enabled\" or \"disabled\"");
  }
  return ok();
}

Result<MessagesRequest> parse(std::string_view body, bool need_max_tokens) {
  NURL_ASSIGN(Json j, parse_body(body));
  MessagesRequest r;
  NURL_TRY(get_string(j, "model", &r.model));
  if (r.model.empty()) return Error(Code::invalid_argument, "model: Field required");
  NURL_TRY(get_bool(j, "stream", &r.stream));
  NURL_TRY(parse_ollama_extensions(j, &r.options, &r.keep_alive, &r.truncate, &r.ignored_options));
  std::optional<int64_t> max_tokens;
  NURL_TRY(get_integer(j, "max_tokens", 1, 1 << 30, &max_tokens));
  if (need_max_tokens && !max_tokens) return Error(Code::invalid_argument, "max_tokens: Field required");
  if (max_tokens) r.options.num_predict = static_cast<int>(*max_tokens);
  NURL_TRY(get_number(j, "temperature", 0, 1, &r.options.temperature));
  NURL_TRY(get_number(j, "top_p", 0, 1, &r.options.top_p));
  std::optional<int64_t> top_k;
  NURL_TRY(get_integer(j, "top_k", 0, 1 << 30, &top_k));
  if (top_k) r.options.top_k = static_cast<int>(*top_k);
  NURL_TRY(get_strings(j, "stop_sequences", false, &r.options.stop));
  if (const Json* sys = field(j, "system")) {
    NURL_ASSIGN(std::string text, block_text(*sys, "system"));
    if (!text.empty()) r.messages.push_back(ChatTurn{"system", std::move(text), "", {}, "", ""});
  }
  const Json* msgs = field(j, "messages");
  if (!msgs || !msgs->is_array() || msgs->empty()) return bad_field("messages", "a non-empty array of messages");
  for (size_t i = 0; i < msgs->size(); ++i) NURL_TRY(message((*msgs)[i], "messages." + std::to_string(i), &r.messages));
  fill_tool_names(r.messages);
  NURL_TRY(tools(parse_ordered(body), &r.structured));
  NURL_TRY(tool_choice(j, &r.structured));
  NURL_TRY(thinking(j, max_tokens, &r.structured));
  return r;
}

}  // namespace

Result<MessagesRequest> parse_messages_request(std::string_view body) { return parse(body, true); }
Result<MessagesRequest> parse_count_tokens_request(std::string_view body) { return parse(body, false); }

Json error_body(int status, const std::string& message) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 404 ? "not_found_error"
                     : status == 413 ? "request_too_large"
                     : status == 429 ? "rate_limit_error"
                     : status == 503 ? "overloaded_error"
                     : status >= 499 ? "api_error"  // 499: ended by the server (shutting down)
                                     : "invalid_request_error";
  return Json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

}  // namespace nurl::api::anthropic
