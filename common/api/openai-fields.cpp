#include "api/openai-fields.h"

namespace nurl::api::openai {

Result<std::string> parse_model(const Json& j) {
  std::string model;
  NURL_TRY(get_string(j, "model", &model));
  if (model.empty()) return Error(Code::invalid_argument, "model is required");
  return model;
}

Result<void> parse_common(const Json& j, Common* c) {
  NURL_ASSIGN(c->model, parse_model(j));
  NURL_TRY(get_bool(j, "stream", &c->stream));
  if (const Json* so = field(j, "stream_options")) {
    if (!so->is_object()) return bad_field("stream_options", "an object");
    if (!c->stream) return Error(Code::invalid_argument, "\"stream_options\" is only allowed when \"stream\" is true");
    NURL_TRY(get_bool(*so, "include_usage", &c->include_usage));
  }
  NURL_TRY(parse_ollama_extensions(j, &c->options, &c->keep_alive, &c->truncate, &c->ignored_options));
  Options& o = c->options;
  NURL_TRY(get_number(j, "temperature", 0, 2, &o.temperature));
  NURL_TRY(get_number(j, "top_p", 0, 1, &o.top_p));
  NURL_TRY(get_number(j, "presence_penalty", -2, 2, &o.presence_penalty));
  NURL_TRY(get_number(j, "frequency_penalty", -2, 2, &o.frequency_penalty));
  std::optional<int64_t> seed;
  NURL_TRY(get_integer(j, "seed", INT64_MIN, INT64_MAX, &seed));
  if (seed) o.seed = *seed;
  for (const char* key : {"max_tokens", "max_completion_tokens", "max_output_tokens"}) {
    std::optional<int64_t> n;
    NURL_TRY(get_integer(j, key, 1, 1 << 30, &n));
    if (n) o.num_predict = static_cast<int>(*n);
  }
  NURL_TRY(get_strings(j, "stop", true, &o.stop));
  return ok();
}

Result<void> parse_tool_choice(const Json& j, bool nested, StructuredFields* s) {
  if (const Json* c = field(j, "tool_choice")) {
    const char* want = nested ? "\"auto\", \"none\", \"required\" or {\"type\":\"function\",\"function\":{\"name\"}}"
                              : "\"auto\", \"none\", \"required\" or {\"type\":\"function\",\"name\"}";
    if (c->is_string()) {
      s->tool_choice = c->get<std::string>();
      if (s->tool_choice != "auto" && s->tool_choice != "none" && s->tool_choice != "required")
        return bad_field("tool_choice", want);
    } else {
      // Chat names the function inside "function"; the Responses API beside "type".
      const Json* named = !c->is_object() ? nullptr : nested ? field(*c, "function") : c;
      const Json* name = named && named->is_object() ? field(*named, "name") : nullptr;
      if (!name || !name->is_string() || (!nested && string_or(*c, "type") != "function"))
        return bad_field("tool_choice", want);
      s->tool_choice = name->get<std::string>();
    }
  }
  NURL_TRY(get_bool(j, "parallel_tool_calls", &s->parallel_tool_calls));
  return check_tool_choice(*s);
}

Result<void> parse_format(const std::string& type, const OrderedJson& obj, const std::string& where,
                          StructuredFields* s) {
  if (type == "text") {
    s->format.clear();
  } else if (type == "json_object") {
    s->format = "json";
  } else if (type == "json_schema") {
    const OrderedJson* schema = field(obj, "schema");
    if (!schema || !schema->is_object()) return bad_field(where + ".schema", "a JSON schema object");
    if (const OrderedJson* strict = field(obj, "strict"); strict && !strict->is_boolean())
      return bad_field(where + ".strict", "true or false");
    s->format = dump(*schema);
  } else {
    return bad_field(where + ".type", "\"text\", \"json_object\" or \"json_schema\"");
  }
  return ok();
}

Result<void> parse_reasoning_effort(const Json* v, const std::string& where, StructuredFields* s) {
  if (!v) return ok();
  if (!v->is_string()) return bad_field(where, "\"none\", \"minimal\", \"low\", \"medium\" or \"high\"");
  const std::string e = v->get<std::string>();
  if (e == "none") s->think = "false";
  else if (e == "minimal" || e == "low") s->think = "low";
  else if (e == "medium" || e == "high") s->think = e;
  else return bad_field(where, "\"none\", \"minimal\", \"low\", \"medium\" or \"high\"");
  return ok();
}

}  // namespace nurl::api::openai
