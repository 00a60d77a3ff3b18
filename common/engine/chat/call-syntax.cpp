// Readers for the call syntaxes (see call-syntax.h).
#include "engine/chat/call-syntax.h"

#include <algorithm>
#include <cctype>

#include "core/json-text.h"

namespace nurl::chat {

namespace {

using Json = nlohmann::ordered_json;

std::optional<Json> json_or_none(std::string_view text) {
  Json j = parse_ordered_json(text);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

const Json* find_key(const Json& v, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    if (k.empty()) continue;
    auto it = v.find(std::string(k));
    if (it != v.end()) return &*it;
  }
  return nullptr;
}

// A tiny reader for Python literals and calls.
class Py {
 public:
  explicit Py(std::string_view s) : s_(s) {}

  std::optional<std::vector<CallJson>> calls() {
    ws();
    const bool bracket = eat('[');
    std::vector<CallJson> out;
    while (true) {
      ws();
      if (bracket && eat(']')) break;
      if (!bracket && i_ >= s_.size()) break;
      auto c = call();
      if (!c) return std::nullopt;
      out.push_back(std::move(*c));
      ws();
      if (eat(',')) continue;
      if (bracket) {
        if (!eat(']')) return std::nullopt;
        break;
      }
      if (i_ < s_.size()) return std::nullopt;
    }
    ws();
    if (i_ != s_.size() || out.empty()) return std::nullopt;
    return out;
  }

 private:
  void ws() {
    while (i_ < s_.size() && space(s_[i_])) ++i_;
  }
  bool eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::string ident(bool dots) {
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || (dots && s_[i_] == '.')))
      ++i_;
    return std::string(s_.substr(b, i_ - b));
  }
  std::optional<CallJson> call() {
    CallJson c;
    c.name = ident(true);
    if (c.name.empty() || !eat('(')) return std::nullopt;
    c.arguments = Json::object();
    ws();
    if (eat(')')) return c;
    while (true) {
      ws();
      std::string k = ident(false);
      ws();
      if (k.empty() || !eat('=')) return std::nullopt;
      auto v = value(0);
      if (!v) return std::nullopt;
      c.arguments[k] = std::move(*v);
      ws();
      if (eat(')')) return c;
      if (!eat(',')) return std::nullopt;
    }
  }
  std::optional<Json> value(int depth) {
    if (depth > 32) return std::nullopt;
    ws();
    if (i_ >= s_.size()) return std::nullopt;
    const char c = s_[i_];
    if (c == '\'' || c == '"') return string(c);
    if (c == '[') {
      ++i_;
      Json a = Json::array();
      ws();
      if (eat(']')) return a;
      while (true) {
        auto v = value(depth + 1);
        if (!v) return std::nullopt;
        a.push_back(std::move(*v));
        ws();
        if (eat(']')) return a;
        if (!eat(',')) return std::nullopt;
      }
    }
    if (c == '{') {
      ++i_;
      Json o = Json::object();
      ws();
      if (eat('}')) return o;
      while (true) {
        ws();
        if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) return std::nullopt;
        auto k = string(s_[i_]);
        ws();
        if (!k || !eat(':')) return std::nullopt;
        auto v = value(depth + 1);
        if (!v) return std::nullopt;
        o[k->get<std::string>()] = std::move(*v);
        ws();
        if (eat('}')) return o;
        if (!eat(',')) return std::nullopt;
      }
    }
    std::string word = ident(false);
    if (word == "True") return Json(true);
    if (word == "False") return Json(false);
    if (word == "None") return Json(nullptr);
    size_t b = i_ - word.size();
    i_ = b;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || std::string_view("+-.eE").find(s_[i_]) != std::string_view::npos))
      ++i_;
    if (i_ == b) return std::nullopt;
    auto n = json_or_none(s_.substr(b, i_ - b));
    if (!n || !n->is_number()) return std::nullopt;
    return n;
  }
  std::optional<Json> string(char q) {
    ++i_;
    std::string out;
    while (i_ < s_.size() && s_[i_] != q) {
      char c = s_[i_++];
      if (c == '\\' && i_ < s_.size()) {
        char e = s_[i_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
      }
      out += c;
    }
    if (!eat(q)) return std::nullopt;
    return Json(out);
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

size_t json_value_end(std::string_view s, size_t pos) {
  while (pos < s.size() && space(s[pos])) ++pos;
  if (pos >= s.size()) return kIncomplete;
  const char c = s[pos];
  if (c == '{' || c == '[' || c == '"') {
    int depth = 0;
    bool in_str = false, esc = false;
    for (size_t i = pos; i < s.size(); ++i) {
      const char ch = s[i];
      if (in_str) {
        if (esc) esc = false;
        else if (ch == '\\') esc = true;
        else if (ch == '"') {
          in_str = false;
          if (depth == 0) return i + 1;
        }
        continue;
      }
      if (ch == '"') in_str = true;
      else if (ch == '{' || ch == '[') ++depth;
      else if (ch == '}' || ch == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return kIncomplete;
  }
  if (c == '-' || std::isdigit(static_cast<unsigned char>(c)) || c == 't' || c == 'f' || c == 'n') {
    size_t i = pos;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == '+' || s[i] == '.'))
      ++i;
    return i == s.size() ? kIncomplete : i;
  }
  return kNotJson;
}

std::optional<CallJson> call_from_json(const Json& v, std::string_view name_key, std::string_view args_key) {
  if (!v.is_object()) return std::nullopt;
  const Json* holder = &v;
  if (!find_key(v, {name_key, "name"}) && v.contains("function") && v["function"].is_object()) holder = &v["function"];
  const Json* name = find_key(*holder, {name_key, "name"});
  if (!name || !name->is_string() || name->get<std::string>().empty()) return std::nullopt;
  CallJson c;
  c.name = name->get<std::string>();
  const Json* args = find_key(*holder, {args_key, "arguments", "parameters"});
  if (!args || args->is_null()) {
    c.arguments = Json::object();
  } else if (args->is_string()) {
    auto parsed = json_or_none(args->get<std::string>());
    if (!parsed || !parsed->is_object()) return std::nullopt;
    c.arguments = std::move(*parsed);
  } else if (args->is_object()) {
    c.arguments = *args;
  } else {
    return std::nullopt;
  }
  if (const Json* id = find_key(v, {"id", "tool_call_id"}); id && id->is_string()) c.id = id->get<std::string>();
  return c;
}

std::optional<std::vector<CallJson>> calls_from_json_text(std::string_view text, std::string_view name_key,
                                                          std::string_view args_key) {
  auto j = json_or_none(text);
  if (!j) return std::nullopt;
  std::vector<CallJson> out;
  if (j->is_array()) {
    for (const auto& e : *j) {
      auto c = call_from_json(e, name_key, args_key);
      if (!c) return std::nullopt;
      out.push_back(std::move(*c));
    }
    if (out.empty()) return std::nullopt;
    return out;
  }
  auto c = call_from_json(*j, name_key, args_key);
  if (!c) return std::nullopt;
  out.push_back(std::move(*c));
  return out;
}

std::optional<std::vector<CallJson>> pythonic_calls(std::string_view text) { return Py(text).calls(); }

std::optional<CallJson> gemma_call(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && space(text[i])) ++i;
  if (text.substr(i, 5) != "call:") return std::nullopt;
  i += 5;
  const size_t brace = text.find('{', i);
  if (brace == std::string_view::npos) return std::nullopt;
  CallJson c;
  c.name = std::string(text.substr(i, brace - i));
  if (c.name.empty()) return std::nullopt;
  // {key:<|"|>text<|"|>,n:1} → {"key":"text","n":1}
  constexpr std::string_view q = "<|\"|>";
  std::string js;
  for (size_t k = brace; k < text.size();) {
    if (text.substr(k, q.size()) == q) {
      const size_t end = text.find(q, k + q.size());
      if (end == std::string_view::npos) return std::nullopt;
      js += dump_json(Json(std::string(text.substr(k + q.size(), end - k - q.size()))), -1, InvalidUtf8::replace);
      k = end + q.size();
      continue;
    }
    const char ch = text[k];
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      size_t e = k;
      while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
      const std::string_view word = text.substr(k, e - k);
      if (e < text.size() && text[e] == ':') js += dump_json(Json(std::string(word)), -1, InvalidUtf8::replace);
      else js += std::string(word);
      k = e;
      continue;
    }
    js += ch;
    ++k;
  }
  auto args = json_or_none(js);
  if (!args || !args->is_object()) return std::nullopt;
  c.arguments = std::move(*args);
  return c;
}

namespace {

const Json* function_parameters(const Json& tools, std::string_view function) {
  if (!tools.is_array()) return nullptr;
  for (const auto& t : tools) {
    const Json& f = t.contains("function") ? t["function"] : t;
    if (f.is_object() && f.value("name", "") == function && f.contains("parameters") && f["parameters"].is_object())
      return &f["parameters"];
  }
  return nullptr;
}

// The sub-schema of a member (properties) or of an array's elements (items); null when unknown.
const Json* member_schema(const Json* schema, const char* keyword, const std::string& key) {
  if (!schema || !schema->is_object() || !schema->contains(keyword)) return nullptr;
  const Json& k = (*schema)[keyword];
  if (key.empty()) return k.is_object() ? &k : nullptr;
  if (!k.is_object() || !k.contains(key)) return nullptr;
  return &k[key];
}

bool says_type(const Json* schema, std::string_view type) {
  if (!schema || !schema->is_object() || !schema->contains("type")) return false;
  const Json& t = (*schema)["type"];
  if (t.is_string()) return t.get<std::string>() == type;
  return t.is_array() && std::find(t.begin(), t.end(), Json(std::string(type))) != t.end();
}

// Raw text as the value `schema` describes: a string when it says only string (and null), else
// the JSON the text spells, else the text.
Json typed_raw(const Json* schema, std::string_view raw) {
  if (schema && schema->is_object() && schema->contains("type")) {
    const Json& t = (*schema)["type"];
    const bool is_string = t == "string" || (t.is_array() && t.size() >= 1 && std::all_of(t.begin(), t.end(), [](const Json& x) {
                                               return x == "string" || x == "null";
                                             }) && std::find(t.begin(), t.end(), Json("string")) != t.end());
    if (is_string) return Json(std::string(raw));
  }
  size_t b = 0, e = raw.size();
  while (b < e && space(raw[b])) ++b;
  while (e > b && space(raw[e - 1])) --e;
  if (b == e && says_type(schema, "array")) return Json::array();  // <k></k>: an empty list or object
  if (b == e && says_type(schema, "object")) return Json::object();
  if (auto j = json_or_none(raw.substr(b, e - b))) return *j;
  return Json(std::string(raw));
}

class NestedReader {
 public:
  NestedReader(std::string_view s, const NestedTags& t) : s_(s), t_(t) {}

  // Elements up to the end of the text (depth 0) or up to the parent's close tag.
  std::optional<Json> elements(const Json* schema, int depth) {
    if (depth > 32) return std::nullopt;
    Json obj = Json::object(), arr = Json::array();
    bool items = true, any = false;
    while (true) {
      skip();
      if (i_ >= s_.size() || at(t_.close)) break;
      if (!at(t_.open)) return std::nullopt;
      i_ += t_.open.size();
      const size_t ke = s_.find(t_.close_end, i_);
      if (ke == std::string_view::npos || ke == i_) return std::nullopt;
      const std::string key(s_.substr(i_, ke - i_));
      i_ = ke + t_.close_end.size();
      const bool item = key == "item";
      const Json* sub = item ? member_schema(schema, "items", "") : member_schema(schema, "properties", key);
      Json v;
      size_t j = i_;
      while (j < s_.size() && space(s_[j])) ++j;
      if (s_.substr(j, t_.open.size()) == t_.open && s_.substr(j, t_.close.size()) != t_.close) {
        auto children = elements(sub, depth + 1);
        if (!children) return std::nullopt;
        v = std::move(*children);
      } else {
        const std::string end = std::string(t_.close) + key + std::string(t_.close_end);
        const size_t ve = s_.find(end, i_);
        if (ve == std::string_view::npos) return std::nullopt;
        v = typed_raw(sub, s_.substr(i_, ve - i_));
        i_ = ve;
      }
      const std::string end = std::string(t_.close) + key + std::string(t_.close_end);
      if (!at(end)) return std::nullopt;
      i_ += end.size();
      items = items && item;
      any = true;
      if (item) arr.push_back(v);
      obj[key] = std::move(v);
    }
    if (depth == 0) return obj;  // the arguments are always an object
    if (!any) return says_type(schema, "array") ? Json::array() : Json::object();
    return items ? arr : obj;
  }

  bool done() {
    skip();
    return i_ == s_.size();
  }

 private:
  bool at(std::string_view m) const { return s_.substr(i_, m.size()) == m; }
  void skip() {
    while (i_ < s_.size() && space(s_[i_])) ++i_;
  }

  std::string_view s_;
  NestedTags t_;
  size_t i_ = 0;
};

}  // namespace

Json typed_value(const Json& tools, std::string_view function, std::string_view param, std::string_view raw) {
  return typed_raw(member_schema(function_parameters(tools, function), "properties", std::string(param)), raw);
}

std::optional<Json> nested_arguments(std::string_view body, const NestedTags& tags, const Json& tools,
                                     std::string_view function) {
  NestedReader r(body, tags);
  auto args = r.elements(function_parameters(tools, function), 0);
  if (!args || !r.done()) return std::nullopt;
  return args;
}

}  // namespace nurl::chat
