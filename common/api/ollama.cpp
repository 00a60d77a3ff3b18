#include "api/ollama.h"

#include <ctime>

#include "api/json-fields.h"
#include "core/json-text.h"

namespace nurl::api {

namespace {

Result<std::string> get_model(const Json& j) {
  std::string model, name;
  NURL_TRY(get_string(j, "model", &model));
  NURL_TRY(get_string(j, "name", &name));
  if (model.empty()) model = name;
  if (model.empty()) return Error(Code::invalid_argument, "model is required");
  return model;
}

Result<std::optional<Nanos>> get_keep_alive(const Json& j) {
  auto it = j.find("keep_alive");
  if (it == j.end() || it->is_null()) return std::optional<Nanos>{};
  NURL_ASSIGN(Nanos d, parse_keep_alive(*it));
  return std::optional<Nanos>(d);
}

// format, think, logprobs, top_logprobs. `ordered` is the same body with its key order kept
// (a schema's property order is the order the fields are generated in).
Result<OutputOptions> get_output(const Json& j, const OrderedJson& ordered) {
  OutputOptions o;
  if (auto it = j.find("format"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      const std::string f = it->get<std::string>();
      if (!f.empty() && f != "json") return bad_field("format", "\"json\" or a JSON schema object");
      o.format = f;
    } else if (it->is_object()) {
      o.format = dump(ordered["format"]);
    } else {
      return bad_field("format", "\"json\" or a JSON schema object");
    }
  }
  if (auto it = j.find("think"); it != j.end() && !it->is_null()) {
    if (it->is_boolean()) {
      o.think = it->get<bool>() ? "true" : "false";
    } else if (it->is_string()) {
      const std::string t = it->get<std::string>();
      if (t != "low" && t != "medium" && t != "high" && t != "true" && t != "false")
        return bad_field("think", "true, false, \"low\", \"medium\" or \"high\"");
      o.think = t;
    } else {
      return bad_field("think", "true, false, \"low\", \"medium\" or \"high\"");
    }
  }
  bool logprobs = false;
  NURL_TRY(get_bool(j, "logprobs", &logprobs));
  int top = 0;
  if (auto it = j.find("top_logprobs"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 20)
      return bad_field("top_logprobs", "an integer from 0 to 20");
    top = it->get<int>();
  }
  if (logprobs || top > 0) o.top_logprobs = top;
  return o;
}

Result<void> get_tool_calls(const Json& m, std::vector<ToolCall>* out) {
  auto it = m.find("tool_calls");
  if (it == m.end() || it->is_null()) return ok();
  if (!it->is_array()) return bad_field("tool_calls", "an array");
  for (const auto& c : *it) {
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object())
      return bad_field("tool_calls", "an array of {function: {name, arguments}}");
    const Json& f = c["function"];
    ToolCall t;
    if (!f.contains("name") || !f["name"].is_string()) return bad_field("tool_calls", "calls with a function name");
    t.name = f["name"].get<std::string>();
    if (f.contains("arguments")) {
      const Json& a = f["arguments"];
      if (a.is_string()) {
        Json parsed = parse_json(a.get<std::string>());
        if (parsed.is_discarded() || !parsed.is_object()) return bad_field("tool_calls", "arguments as a JSON object");
        t.arguments = dump_json(parsed);
      } else if (a.is_object()) {
        t.arguments = dump_json(a);
      } else if (a.is_null()) {
        t.arguments = "{}";
      } else {
        return bad_field("tool_calls", "arguments as a JSON object");
      }
    } else {
      t.arguments = "{}";
    }
    if (c.contains("id") && c["id"].is_string()) t.id = c["id"].get<std::string>();
    if (f.contains("index") && f["index"].is_number_integer()) t.index = f["index"].get<int>();
    out->push_back(std::move(t));
  }
  return ok();
}

Result<Options> get_options(const Json& j, std::vector<std::string>* ignored) {
  auto it = j.find("options");
  if (it == j.end() || it->is_null()) return Options{};
  return parse_options(*it, ignored);
}

Result<void> get_images(const Json& j, std::vector<std::string>* out) {
  auto it = j.find("images");
  if (it == j.end() || it->is_null()) return ok();
  if (!it->is_array()) return bad_field("images", "an array of base64 strings");
  for (const auto& x : *it) {
    if (!x.is_string()) return bad_field("images", "an array of base64 strings");
    out->push_back(x.get<std::string>());
  }
  return ok();
}

}  // namespace

void Options::merge(const Options& o) {
#define NURL_MERGE_(f) if (o.f) f = o.f
  NURL_MERGE_(num_ctx); NURL_MERGE_(num_predict); NURL_MERGE_(top_k); NURL_MERGE_(repeat_last_n);
  NURL_MERGE_(num_keep); NURL_MERGE_(num_batch); NURL_MERGE_(seed); NURL_MERGE_(temperature); NURL_MERGE_(top_p);
  NURL_MERGE_(min_p); NURL_MERGE_(typical_p); NURL_MERGE_(repeat_penalty); NURL_MERGE_(presence_penalty);
  NURL_MERGE_(frequency_penalty); NURL_MERGE_(stop);
#undef NURL_MERGE_
}

Json Options::to_json() const {
  Json j = Json::object();
#define NURL_PUT_(f) if (f) j[#f] = *f
  NURL_PUT_(num_ctx); NURL_PUT_(num_predict); NURL_PUT_(top_k); NURL_PUT_(repeat_last_n); NURL_PUT_(num_keep);
  NURL_PUT_(num_batch); NURL_PUT_(seed); NURL_PUT_(temperature); NURL_PUT_(top_p); NURL_PUT_(min_p);
  NURL_PUT_(typical_p); NURL_PUT_(repeat_penalty); NURL_PUT_(presence_penalty); NURL_PUT_(frequency_penalty);
  NURL_PUT_(stop);
#undef NURL_PUT_
  return j;
}

Result<Options> parse_options(const Json& j, std::vector<std::string>* ignored) {
  if (!j.is_object()) return Error(Code::invalid_argument, "\"options\" must be an object");
  Options o;
  for (const auto& item : j.items()) {
    // Named references, not a structured binding: the lambdas below capture them (clang < 16
    // cannot capture bindings).
    const std::string& name = item.key();
    const Json& v = item.value();
    if (v.is_null()) continue;
    auto int_opt = [&](std::optional<int>* dst, int64_t lo, int64_t hi) -> Result<void> {
      NURL_ASSIGN(int64_t x, as_integer(v, "option \"" + name + "\""));
      if (x < lo || x > hi)
        return Error(Code::invalid_argument, "option \"" + name + "\" is out of range [" + std::to_string(lo) + ", " +
                                                 std::to_string(hi) + "]");
      *dst = static_cast<int>(x);
      return ok();
    };
    auto num_opt = [&](std::optional<double>* dst) -> Result<void> {
      NURL_ASSIGN(double x, as_number(v, "option \"" + name + "\""));
      *dst = x;
      return ok();
    };
    if (name == "num_ctx") NURL_TRY(int_opt(&o.num_ctx, 1, 1 << 24));
    else if (name == "num_predict") NURL_TRY(int_opt(&o.num_predict, -2, 1 << 30));
    else if (name == "top_k") NURL_TRY(int_opt(&o.top_k, -1, 1 << 30));
    else if (name == "repeat_last_n") NURL_TRY(int_opt(&o.repeat_last_n, -1, 1 << 30));
    else if (name == "num_keep") NURL_TRY(int_opt(&o.num_keep, -1, 1 << 30));
    else if (name == "num_batch") NURL_TRY(int_opt(&o.num_batch, 1, 1 << 20));
    else if (name == "seed") {
      NURL_ASSIGN(int64_t x, as_integer(v, "option \"" + name + "\""));
      o.seed = x;
    } else if (name == "temperature") NURL_TRY(num_opt(&o.temperature));
    else if (name == "top_p") NURL_TRY(num_opt(&o.top_p));
    else if (name == "min_p") NURL_TRY(num_opt(&o.min_p));
    else if (name == "typical_p") NURL_TRY(num_opt(&o.typical_p));
    else if (name == "repeat_penalty") NURL_TRY(num_opt(&o.repeat_penalty));
    else if (name == "presence_penalty") NURL_TRY(num_opt(&o.presence_penalty));
    else if (name == "frequency_penalty") NURL_TRY(num_opt(&o.frequency_penalty));
    else if (name == "stop") {
      std::vector<std::string> stops;
      if (v.is_string()) {
        stops.push_back(v.get<std::string>());
      } else if (v.is_array()) {
        for (const auto& s : v) {
          if (!s.is_string()) return Error(Code::invalid_argument, "option \"stop\" must be an array of strings");
          stops.push_back(s.get<std::string>());
        }
      } else {
        return Error(Code::invalid_argument, "option \"stop\" must be an array of strings, got " +
                                                 std::string(v.type_name()));
      }
      o.stop = std::move(stops);
    } else if (ignored) {
      ignored->push_back(name);
    }
  }
  return o;
}

Result<Nanos> parse_keep_alive(const Json& v) {
  if (v.is_number()) return seconds_to_duration(v.get<double>());
  if (v.is_string()) {
    auto d = parse_duration(v.get<std::string>());
    if (!d.ok()) return Error(Code::invalid_argument, "invalid keep_alive: " + d.error().msg);
    return *d;
  }
  return Error(Code::invalid_argument, "invalid value for \"keep_alive\": expected a number of seconds or a duration");
}

Result<void> parse_ollama_extensions(const Json& j, Options* options, std::optional<Nanos>* keep_alive, bool* truncate,
                                     std::vector<std::string>* ignored) {
  NURL_ASSIGN(*options, get_options(j, ignored));
  NURL_ASSIGN(*keep_alive, get_keep_alive(j));
  return get_bool(j, "truncate", truncate);
}

Result<GenerateRequest> parse_generate_request(std::string_view body, std::vector<std::string>* ignored) {
  NURL_ASSIGN(Json j, parse_body(body));
  GenerateRequest r;
  NURL_ASSIGN(r.model, get_model(j));
  NURL_TRY(get_string(j, "prompt", &r.prompt));
  NURL_TRY(get_string(j, "suffix", &r.suffix));
  NURL_TRY(get_string(j, "system", &r.system));
  NURL_TRY(get_string(j, "template", &r.template_override));
  NURL_TRY(get_bool(j, "stream", &r.stream));
  NURL_TRY(get_bool(j, "raw", &r.raw));
  NURL_TRY(get_bool(j, "truncate", &r.truncate));
  NURL_TRY(get_bool(j, "_debug_render_only", &r.debug_render_only));
  NURL_TRY(get_images(j, &r.images));
  if (auto it = j.find("context"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return bad_field("context", "an array of token ids");
    for (const auto& t : *it) {
      if (!t.is_number_integer()) return bad_field("context", "an array of token ids");
      r.context.push_back(t.get<int32_t>());
    }
  }
  // As ollama: a raw prompt is sent as is, so nothing may be templated around it.
  if (r.raw && (!r.system.empty() || !r.template_override.empty() || !r.context.empty()))
    return Error(Code::invalid_argument, "raw mode does not support template, system, or context");
  NURL_ASSIGN(r.keep_alive, get_keep_alive(j));
  NURL_ASSIGN(r.options, get_options(j, ignored));
  NURL_ASSIGN(r.output, get_output(j, parse_ordered(body)));
  return r;
}

Result<ChatRequest> parse_chat_request(std::string_view body, std::vector<std::string>* ignored) {
  NURL_ASSIGN(Json j, parse_body(body));
  ChatRequest r;
  NURL_ASSIGN(r.model, get_model(j));
  NURL_TRY(get_bool(j, "stream", &r.stream));
  NURL_TRY(get_bool(j, "truncate", &r.truncate));
  NURL_TRY(get_bool(j, "_debug_render_only", &r.debug_render_only));
  if (auto it = j.find("messages"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return bad_field("messages", "an array of {role, content}");
    for (const auto& m : *it) {
      if (!m.is_object()) return bad_field("messages", "an array of {role, content}");
      Message msg;
      NURL_TRY(get_string(m, "role", &msg.role));
      NURL_TRY(get_string(m, "content", &msg.content));
      NURL_TRY(get_images(m, &msg.images));
      NURL_TRY(get_string(m, "thinking", &msg.thinking));
      NURL_TRY(get_string(m, "tool_name", &msg.tool_name));
      NURL_TRY(get_string(m, "tool_call_id", &msg.tool_call_id));
      NURL_TRY(get_tool_calls(m, &msg.tool_calls));
      if (msg.role.empty()) return Error(Code::invalid_argument, "a message has no role");
      r.messages.push_back(std::move(msg));
    }
  }
  NURL_ASSIGN(r.keep_alive, get_keep_alive(j));
  NURL_ASSIGN(r.options, get_options(j, ignored));
  const OrderedJson ordered = parse_ordered(body);
  NURL_ASSIGN(r.output, get_output(j, ordered));
  if (auto it = j.find("tools"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return bad_field("tools", "an array of tool definitions");
    for (const auto& t : *it)
      if (!t.is_object()) return bad_field("tools", "an array of tool definitions");
    if (!it->empty()) r.tools = dump(ordered["tools"]);
  }
  return r;
}

Result<EmbedRequest> parse_embed_request(std::string_view body, bool legacy, std::vector<std::string>* ignored) {
  NURL_ASSIGN(Json j, parse_body(body));
  EmbedRequest r;
  NURL_ASSIGN(r.model, get_model(j));
  if (legacy) {
    std::string prompt;
    NURL_TRY(get_string(j, "prompt", &prompt));
    r.input_was_list = false;
    if (!prompt.empty()) r.input.push_back(prompt);
  } else if (auto it = j.find("input"); it != j.end() && !it->is_null()) {
    if (it->is_string()) {
      r.input.push_back(it->get<std::string>());
      r.input_was_list = false;
    } else if (it->is_array()) {
      for (const auto& s : *it) {
        if (!s.is_string()) return bad_field("input", "a string or an array of strings");
        r.input.push_back(s.get<std::string>());
      }
    } else {
      return bad_field("input", "a string or an array of strings");
    }
  }
  NURL_TRY(get_bool(j, "truncate", &r.truncate));
  if (auto it = j.find("dimensions"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1) return bad_field("dimensions", "a positive integer");
    r.dimensions = it->get<int>();
  }
  NURL_ASSIGN(r.keep_alive, get_keep_alive(j));
  NURL_ASSIGN(r.options, get_options(j, ignored));
  return r;
}

Result<ShowRequest> parse_show_request(std::string_view body) {
  NURL_ASSIGN(Json j, parse_body(body));
  ShowRequest r;
  NURL_ASSIGN(r.model, get_model(j));
  NURL_TRY(get_bool(j, "verbose", &r.verbose));
  return r;
}

Result<std::string> parse_model_field(std::string_view body) {
  NURL_ASSIGN(Json j, parse_body(body));
  return get_model(j);
}

std::string format_time(std::chrono::system_clock::time_point t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  long frac = static_cast<long>(ns % 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%09ldZ", frac);
  return buf;
}

}  // namespace nurl::api
