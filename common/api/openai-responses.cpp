// The Responses API request (/v1/responses), stateless: the whole conversation comes in `input`
// (a string, or message / function_call / function_call_output / reasoning items); anything that
// refers to stored state (previous_response_id, conversation, item_reference) is a 400.
#include "api/openai-fields.h"

namespace nurl::api::openai {

namespace {

Result<std::string> item_text(const Json& content, const std::string& where) {
  return joined_text(content, where, {"input_text", "output_text", "text", "reasoning_text", "summary_text"},
                     {"refusal"});
}

Result<void> input_items(const Json& items, std::vector<ChatTurn>* out) {
  std::string thinking;  // a reasoning item belongs to the assistant turn after it
  auto assistant = [&]() -> ChatTurn& {
    if (out->empty() || out->back().role != "assistant") out->push_back(ChatTurn{"assistant", "", "", {}, "", ""});
    ChatTurn& t = out->back();
    if (!thinking.empty()) t.thinking += std::exchange(thinking, {});
    return t;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const Json& it = items[i];
    const std::string at = "input[" + std::to_string(i) + "]";
    if (!it.is_object()) return bad_field(at, "an input item object");
    std::string type = it.contains("role") ? "message" : "";
    NURL_TRY(get_string(it, "type", &type));
    if (type == "message") {
      ChatTurn t;
      NURL_TRY(get_string(it, "role", &t.role));
      if (t.role == "developer") t.role = "system";
      if (t.role != "system" && t.role != "user" && t.role != "assistant")
        return Error(Code::invalid_argument, at + ".role: \"" + t.role + "\" is not one of system, developer, user, assistant");
      const Json* content = field(it, "content");
      if (!content) return bad_field(at + ".content", "a string or an array of parts");
      NURL_ASSIGN(t.content, item_text(*content, at + ".content"));
      if (t.role == "assistant") {
        t.thinking = std::exchange(thinking, {});
      }
      out->push_back(std::move(t));
    } else if (type == "function_call") {
      ToolCallTurn c;
      NURL_TRY(get_string(it, "call_id", &c.id));
      NURL_TRY(get_string(it, "name", &c.name));
      NURL_TRY(get_string(it, "arguments", &c.arguments));
      if (c.id.empty() || c.name.empty()) return bad_field(at, "a function_call with call_id and name");
      if (c.arguments.empty()) c.arguments = "{}";
      assistant().tool_calls.push_back(std::move(c));
    } else if (type == "function_call_output") {
      ChatTurn t;
      t.role = "tool";
      NURL_TRY(get_string(it, "call_id", &t.tool_call_id));
      if (t.tool_call_id.empty()) return bad_field(at + ".call_id", "the call_id of the call this answers");
      const Json* o = field(it, "output");
      if (!o) return bad_field(at + ".output", "a string");
      NURL_ASSIGN(t.content, item_text(*o, at + ".output"));
      out->push_back(std::move(t));
    } else if (type == "reasoning") {
      for (const char* key : {"content", "summary"}) {
        if (const Json* c = field(it, key); c && thinking.empty()) {
          NURL_ASSIGN(thinking, item_text(*c, at + "." + key));
        }
      }
    } else {
      return Error(Code::invalid_argument, at + ": items of type \"" + type +
                                               "\" are not supported (this server keeps no state; send messages, "
                                               "function calls and their outputs)");
    }
  }
  fill_tool_names(*out);
  return ok();
}

// The tools, from the body's ordered parse (see function_tool).
Result<void> response_tools(const OrderedJson& j, StructuredFields* s) {
  if (const OrderedJson* tools = field(j, "tools")) {
    if (!tools->is_array()) return bad_field("tools", "an array of function tools");
    OrderedJson out = OrderedJson::array();
    for (size_t i = 0; i < tools->size(); ++i) {
      const OrderedJson& t = (*tools)[i];
      const std::string at = "tools[" + std::to_string(i) + "]";
      const std::string type = string_or(t, "type");
      if (type != "function")
        return Error(Code::invalid_argument, at + ": tools of type \"" + type + "\" are not supported (only function)");
      NURL_ASSIGN(OrderedJson tool, function_tool(field(t, "name"), field(t, "description"), field(t, "parameters"), at));
      out.push_back(std::move(tool));
    }
    if (!out.empty()) s->tools = dump(out);
  }
  return ok();
}

}  // namespace

Result<ResponsesRequest> parse_responses_request(std::string_view body) {
  NURL_ASSIGN(Json j, parse_body(body));
  ResponsesRequest r;
  NURL_TRY(parse_common(j, &r.common));
  for (const char* key : {"previous_response_id", "conversation"})
    if (field(j, key))
      return Error(Code::invalid_argument, "\"" + std::string(key) +
                                               "\" is not supported: this server keeps no state; send the whole "
                                               "conversation in \"input\"");
  bool background = false;
  NURL_TRY(get_bool(j, "background", &background));
  if (background) return Error(Code::invalid_argument, "\"background\": true is not supported");
  NURL_TRY(get_string(j, "instructions", &r.instructions));
  const Json* in = field(j, "input");
  if (!in) return bad_field("input", "a string or an array of input items");
  if (in->is_string()) {
    r.input.push_back(ChatTurn{"user", in->get<std::string>(), "", {}, "", ""});
  } else if (in->is_array() && !in->empty()) {
    NURL_TRY(input_items(*in, &r.input));
  } else {
    return bad_field("input", "a string or a non-empty array of input items");
  }
  auto& s = r.common.structured;
  const OrderedJson ordered = parse_ordered(body);
  if (const OrderedJson* text = field(ordered, "text")) {
    if (!text->is_object()) return bad_field("text", "an object");
    if (const OrderedJson* f = field(*text, "format")) {
      if (!f->is_object()) return bad_field("text.format", "an object with a type");
      std::string type;
      NURL_TRY(get_string(*f, "type", &type));
      NURL_TRY(parse_format(type, *f, "text.format", &s));
    }
  }
  NURL_TRY(response_tools(ordered, &s));
  NURL_TRY(parse_tool_choice(j, /*nested=*/false, &s));
  if (const Json* reasoning = field(j, "reasoning")) {
    if (!reasoning->is_object()) return bad_field("reasoning", "an object");
    NURL_TRY(parse_reasoning_effort(field(*reasoning, "effort"), "reasoning.effort", &s));
  }
  std::optional<int64_t> top;
  NURL_TRY(get_integer(j, "top_logprobs", 0, 20, &top));
  if (top) s.top_logprobs = static_cast<int>(*top);
  return r;
}

}  // namespace nurl::api::openai
