// OpenAI request parsing (see openai.h): the fields every generating request shares, chat
// messages, completions and embeddings. The Responses API's input items are in
// openai-responses.cpp.
#include "api/openai.h"

#include "api/openai-fields.h"

namespace nurl::api::openai {

namespace {

Result<std::string> text_parts(const Json& content, const std::string& where) {
  return joined_text(content, where, {"text", "input_text", "output_text"}, {"refusal"});
}

Result<ToolCallTurn> chat_tool_call(const Json& c, const std::string& where) {
  if (!c.is_object()) return bad_field(where, "a tool call object");
  ToolCallTurn t;
  NURL_TRY(get_string(c, "id", &t.id));
  const Json* fn = field(c, "function");
  if (!fn || !fn->is_object()) return bad_field(where + ".function", "an object with name and arguments");
  NURL_TRY(get_string(*fn, "name", &t.name));
  if (t.name.empty()) return bad_field(where + ".function.name", "the function's name");
  // OpenAI sends the arguments as JSON text; some clients send the object itself.
  if (const Json* a = field(*fn, "arguments")) t.arguments = a->is_string() ? a->get<std::string>() : dump(*a);
  if (t.arguments.empty()) t.arguments = "{}";
  return t;
}

Result<ChatTurn> chat_message(const Json& m, const std::string& where) {
  if (!m.is_object()) return bad_field(where, "a message object with role and content");
  ChatTurn t;
  NURL_TRY(get_string(m, "role", &t.role));
  if (t.role == "developer") t.role = "system";
  if (t.role != "system" && t.role != "user" && t.role != "assistant" && t.role != "tool")
    return Error(Code::invalid_argument, where + ".role: \"" + t.role +
                                             "\" is not one of system, developer, user, assistant, tool");
  const Json* content = field(m, "content");
  if (content) {
    auto text = text_parts(*content, where + ".content");
    if (!text.ok()) return text.error();
    t.content = std::move(*text);
  }
  if (t.role == "assistant") {
    if (const Json* calls = field(m, "tool_calls")) {
      if (!calls->is_array()) return bad_field(where + ".tool_calls", "an array");
      for (size_t i = 0; i < calls->size(); ++i) {
        NURL_ASSIGN(auto c, chat_tool_call((*calls)[i], where + ".tool_calls[" + std::to_string(i) + "]"));
        t.tool_calls.push_back(std::move(c));
      }
    }
    NURL_TRY(get_string(m, "reasoning_content", &t.thinking));
  } else if (!content) {
    return bad_field(where + ".content", "a string or an array of content parts");
  }
  if (t.role == "tool") {
    NURL_TRY(get_string(m, "tool_call_id", &t.tool_call_id));
    if (t.tool_call_id.empty()) return bad_field(where + ".tool_call_id", "the id of the call this answers");
    NURL_TRY(get_string(m, "name", &t.tool_name));
  }
  return t;
}

Result<void> parse_response_format(const OrderedJson& j, StructuredFields* s) {
  const OrderedJson* rf = field(j, "response_format");
  if (!rf) return ok();
  if (!rf->is_object()) return bad_field("response_format", "an object with a type");
  std::string type;
  NURL_TRY(get_string(*rf, "type", &type));
  if (type == "json_schema") {
    const OrderedJson* js = field(*rf, "json_schema");
    if (!js || !js->is_object()) return bad_field("response_format.json_schema", "an object with name and schema");
    return parse_format("json_schema", *js, "response_format.json_schema", s);
  }
  return parse_format(type, *rf, "response_format", s);
}

// The tools, from the body's ordered parse (see function_tool).
Result<void> parse_chat_tools(const OrderedJson& j, StructuredFields* s) {
  if (const OrderedJson* tools = field(j, "tools")) {
    if (!tools->is_array()) return bad_field("tools", "an array of function tools");
    OrderedJson out = OrderedJson::array();
    for (size_t i = 0; i < tools->size(); ++i) {
      const OrderedJson& t = (*tools)[i];
      const std::string at = "tools[" + std::to_string(i) + "]";
      if (!t.is_object() || string_or(t, "type") != "function" || !t.contains("function") || !t["function"].is_object())
        return bad_field(at, "{\"type\":\"function\",\"function\":{...}}");
      const OrderedJson& fn = t["function"];
      NURL_ASSIGN(OrderedJson tool, function_tool(field(fn, "name"), field(fn, "description"),
                                                  field(fn, "parameters"), at + ".function"));
      out.push_back(std::move(tool));
    }
    if (!out.empty()) s->tools = dump(out);
  }
  return ok();
}

// n and best_of: one choice per request.
Result<void> require_one(const Json& j, const char* key) {
  std::optional<int64_t> n;
  NURL_TRY(get_integer(j, key, 1, 128, &n));
  if (n && *n != 1) return Error(Code::invalid_argument, "\"" + std::string(key) + "\": only 1 is supported");
  return ok();
}

}  // namespace

Result<ChatRequest> parse_chat_request(std::string_view body) {
  NURL_ASSIGN(Json j, parse_body(body));
  ChatRequest r;
  NURL_TRY(parse_common(j, &r.common));
  NURL_TRY(require_one(j, "n"));
  const Json* msgs = field(j, "messages");
  if (!msgs || !msgs->is_array() || msgs->empty()) return bad_field("messages", "a non-empty array of messages");
  for (size_t i = 0; i < msgs->size(); ++i) {
    NURL_ASSIGN(auto t, chat_message((*msgs)[i], "messages[" + std::to_string(i) + "]"));
    r.messages.push_back(std::move(t));
  }
  fill_tool_names(r.messages);
  auto& s = r.common.structured;
  const OrderedJson ordered = parse_ordered(body);
  NURL_TRY(parse_response_format(ordered, &s));
  NURL_TRY(parse_chat_tools(ordered, &s));
  NURL_TRY(parse_tool_choice(j, /*nested=*/true, &s));
  NURL_TRY(parse_reasoning_effort(field(j, "reasoning_effort"), "reasoning_effort", &s));
  bool logprobs = false;
  NURL_TRY(get_bool(j, "logprobs", &logprobs));
  std::optional<int64_t> top;
  NURL_TRY(get_integer(j, "top_logprobs", 0, 20, &top));
  if (top && !logprobs) return Error(Code::invalid_argument, "\"top_logprobs\" needs \"logprobs\": true");
  if (logprobs) s.top_logprobs = static_cast<int>(top.value_or(0));
  return r;
}

Result<CompletionRequest> parse_completion_request(std::string_view body) {
  NURL_ASSIGN(Json j, parse_body(body));
  CompletionRequest r;
  NURL_TRY(parse_common(j, &r.common));
  NURL_TRY(require_one(j, "n"));
  NURL_TRY(require_one(j, "best_of"));
  const Json* p = field(j, "prompt");
  if (!p) return bad_field("prompt", "a string");
  if (p->is_array()) {
    if (p->size() != 1 || !(*p)[0].is_string())
      return Error(Code::invalid_argument, "\"prompt\": one string per request (lists of several prompts and token "
                                           "ids are not supported)");
    r.prompt = (*p)[0].get<std::string>();
  } else if (p->is_string()) {
    r.prompt = p->get<std::string>();
  } else {
    return bad_field("prompt", "a string");
  }
  NURL_TRY(get_string(j, "suffix", &r.suffix));
  NURL_TRY(get_bool(j, "echo", &r.echo));
  std::optional<int64_t> lp;
  NURL_TRY(get_integer(j, "logprobs", 0, 20, &lp));
  if (lp) {
    r.logprobs = static_cast<int>(*lp);
    r.common.structured.top_logprobs = r.logprobs;
  }
  return r;
}

Result<EmbeddingRequest> parse_embedding_request(std::string_view body) {
  NURL_ASSIGN(Json j, parse_body(body));
  EmbeddingRequest r;
  NURL_ASSIGN(r.model, parse_model(j));
  const Json* in = field(j, "input");
  const char* want = "a string, an array of strings, an array of token ids or an array of such arrays";
  if (!in) return bad_field("input", want);
  auto token_list = [&](const Json& a) -> Result<std::vector<int32_t>> {
    std::vector<int32_t> ids;
    for (const auto& t : a) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > INT32_MAX) return bad_field("input", want);
      ids.push_back(t.get<int32_t>());
    }
    if (ids.empty()) return Error(Code::invalid_argument, "\"input\": an empty array of token ids");
    return ids;
  };
  if (in->is_string()) {
    r.inputs.push_back(in->get<std::string>());
  } else if (in->is_array() && !in->empty() && (*in)[0].is_number()) {
    NURL_ASSIGN(auto ids, token_list(*in));
    r.token_inputs.push_back(std::move(ids));
  } else if (in->is_array() && !in->empty()) {
    for (const auto& x : *in) {
      if (x.is_string()) {
        r.inputs.push_back(x.get<std::string>());
      } else if (x.is_array()) {
        NURL_ASSIGN(auto ids, token_list(x));
        r.token_inputs.push_back(std::move(ids));
      } else {
        return bad_field("input", want);
      }
    }
    if (!r.inputs.empty() && !r.token_inputs.empty())
      return Error(Code::invalid_argument, "\"input\": strings and token arrays cannot be mixed");
  } else {
    return bad_field("input", want);
  }
  for (const auto& s : r.inputs)
    if (s.empty()) return Error(Code::invalid_argument, "\"input\": empty strings cannot be embedded");
  std::string enc = "float";
  NURL_TRY(get_string(j, "encoding_format", &enc));
  if (enc != "float" && enc != "base64") return bad_field("encoding_format", "\"float\" or \"base64\"");
  r.base64 = enc == "base64";
  std::optional<int64_t> dims;
  NURL_TRY(get_integer(j, "dimensions", 1, 1 << 20, &dims));
  if (dims) r.dimensions = static_cast<int>(*dims);
  NURL_TRY(parse_ollama_extensions(j, &r.options, &r.keep_alive, &r.truncate, nullptr));
  return r;
}

Json error_body(int status, const std::string& message) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 404 ? "not_found_error"
                     : status == 429 ? "rate_limit_error"
                     : status >= 499 ? "server_error"  // 499: ended by the server (shutting down)
                                     : "invalid_request_error";
  Json code = nullptr;
  if (status == 404 && message.find("model") != std::string::npos) code = "model_not_found";
  return Json{{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", code}}}};
}

}  // namespace nurl::api::openai
