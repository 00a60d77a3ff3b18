// Forced tool-call grammars (see tool-grammar.h).
#include "engine/chat/tool-grammar.h"

#include "engine/grammar/json-rules.h"
#include "engine/grammar/json-schema.h"
#include "engine/grammar/regex.h"

namespace nurl::chat {

namespace {

using Json = nlohmann::ordered_json;
using grammar::Builder;
using grammar::Item;
using grammar::RuleId;
using grammar::Seq;

struct Function {
  std::string name;
  Json parameters;
};

void append(Seq& to, const Seq& s) { to.insert(to.end(), s.begin(), s.end()); }

class CallBuilder {
 public:
  CallBuilder(const ToolFormat& f, Builder& b, grammar::JsonRules& j) : f_(f), b_(b), j_(j) {}

  Result<Seq> call(const Function& fn) {
    switch (f_.syntax) {
      case CallSyntax::json_object:
      case CallSyntax::json_array: return json_call(fn);
      case CallSyntax::name_json: return name_json_call(fn);
      case CallSyntax::xml_params:
      case CallSyntax::xml_nested: return xml_call(fn);
      default:
        return Error(Code::unsupported, "forcing a tool call is not supported for the " + std::string(f_.family) +
                                            " tool-call format");
    }
  }

 private:
  Result<Item> args(const Function& fn) {
    auto r = grammar::compile_schema(j_, fn.parameters);
    if (!r.ok()) return r.error().context("tool \"" + fn.name + "\" parameters");
    return *r;
  }

  Result<Seq> json_call(const Function& fn) {
    Seq s = b_.literal("{");
    s.push_back(j_.ws());
    b_.append(s, grammar::JsonRules::serialize(Json(std::string(f_.name_key))));
    s.insert(s.end(), {j_.ws(), b_.byte(':'), j_.ws()});
    b_.append(s, grammar::JsonRules::serialize(Json(fn.name)));
    s.insert(s.end(), {j_.ws(), b_.byte(','), j_.ws()});
    b_.append(s, grammar::JsonRules::serialize(Json(std::string(f_.args_key))));
    s.insert(s.end(), {j_.ws(), b_.byte(':'), j_.ws()});
    NURL_ASSIGN(Item a, args(fn));
    s.insert(s.end(), {a, j_.ws(), b_.byte('}')});
    return s;
  }

  Seq written_name(const std::string& name) {
    Seq s;
    if (f_.strip_name) {  // functions.NAME:N
      b_.append(s, "functions." + name + ":");
      s.push_back(b_.bytes(grammar::ByteSet::range('0', '9')));
      return s;
    }
    b_.append(s, name);
    return s;
  }

  Result<Seq> name_json_call(const Function& fn) {
    Seq s = b_.literal(f_.call_open);
    if (!f_.id_end.empty()) {
      grammar::ByteSet alnum = grammar::ByteSet::range('a', 'z');
      alnum.add_range('0', '9');
      s.push_back(b_.repeat({b_.bytes(alnum)}, 9, 9, "call-id"));
      b_.append(s, f_.id_end);
    }
    append(s, written_name(fn.name));
    b_.append(s, f_.name_end);
    NURL_ASSIGN(Item a, args(fn));
    s.push_back(a);
    if (!f_.call_close.empty()) {
      s.push_back(j_.ws());
      b_.append(s, f_.call_close);
    }
    return s;
  }

  // A parameter value as the template writes it: strings as raw text (never a '<', so the value
  // cannot run into its close marker), with their enum, const, length, pattern or format; JSON
  // for everything else.
  Result<Item> xml_value(const Json& schema, const std::string& where) {
    if (!(schema.is_object() && schema.contains("type") && schema["type"] == "string")) {
      auto r = grammar::compile_schema(j_, schema);
      if (!r.ok()) return r.error().context(where);
      return *r;
    }
    if (!raw_char_) {
      grammar::CodeRanges r{{'\n', '\n'}, {0x20, '<' - 1}, {'<' + 1, 0x10FFFF}};
      raw_char_ = b_.rule("raw-char", grammar::utf8_char_class(b_, r));
    }
    if (schema.contains("enum") || schema.contains("const")) {
      std::vector<std::string> values;
      for (const auto& v : schema.contains("const") ? Json::array({schema["const"]}) : schema["enum"])
        if (v.is_string() && v.get<std::string>().find('<') == std::string::npos) values.push_back(v.get<std::string>());
      if (values.empty()) return Error(Code::invalid_argument, where + ": no string value to write");
      return b_.ref(b_.one_of(values, "raw-enum"));
    }
    std::string pattern;
    if (schema.contains("pattern") && schema["pattern"].is_string()) pattern = schema["pattern"].get<std::string>();
    if (schema.contains("format") && schema["format"].is_string()) {
      auto f = grammar::format_pattern(schema["format"].get<std::string>());
      if (!f) return Error(Code::invalid_argument, where + ": unsupported format \"" + schema["format"].get<std::string>() + "\"");
      pattern = *f;
    }
    if (!pattern.empty()) {
      auto r = grammar::compile_pattern(b_, pattern, *raw_char_, "raw-pattern", true, {{'<', '<'}});
      if (!r.ok()) return r.error().context(where);
      return b_.ref(*r);
    }
    const uint32_t lo = schema.contains("minLength") && schema["minLength"].is_number_unsigned()
                            ? schema["minLength"].get<uint32_t>() : 0;
    const uint32_t hi = schema.contains("maxLength") && schema["maxLength"].is_number_unsigned()
                            ? schema["maxLength"].get<uint32_t>() : grammar::kUnbounded;
    if (lo > hi) return Error(Code::invalid_argument, where + ": contradictory bounds: minLength > maxLength");
    return b_.repeat(*raw_char_, lo, hi);
  }

  Result<Seq> xml_call(const Function& fn) {
    Seq s = b_.literal(f_.call_open);
    append(s, written_name(fn.name));
    b_.append(s, f_.name_end.empty() ? std::string_view("\n") : f_.name_end);
    NURL_ASSIGN(Seq members, xml_members(fn.parameters, "tool \"" + fn.name + "\"", 0));
    append(s, members);
    s.push_back(j_.ws());
    b_.append(s, f_.call_close);
    return s;
  }

  // An object's properties as elements, in declared order: the required ones always, the others
  // optionally.
  Result<Seq> xml_members(const Json& schema, const std::string& where, int depth) {
    static const Json kNone = Json::object();
    const Json& props = schema.is_object() && schema.contains("properties") ? schema["properties"] : kNone;
    std::vector<std::string> required;
    if (schema.is_object() && schema.contains("required") && schema["required"].is_array())
      for (const auto& r : schema["required"])
        if (r.is_string()) required.push_back(r.get<std::string>());
    Seq s;
    for (const auto& [k, v] : props.items()) {
      Seq p{j_.ws()};
      NURL_ASSIGN(Seq e, xml_element(k, v, where + " parameter \"" + k + "\"", depth));
      append(p, e);
      const bool req = std::find(required.begin(), required.end(), k) != required.end();
      if (req) append(s, p);
      else s.push_back(b_.optional(std::move(p), "param-" + k));
    }
    return s;
  }

  // key_open k key_close [value_open] v value_close, and for xml_nested k key_close after it.
  Result<Seq> xml_element(const std::string& k, const Json& schema, const std::string& where, int depth) {
    Seq p;
    b_.append(p, f_.key_open);
    b_.append(p, k);
    b_.append(p, f_.key_close);
    b_.append(p, f_.value_open);
    if (f_.syntax == CallSyntax::xml_nested) {
      NURL_ASSIGN(Seq v, nested_value(schema, where, depth));
      append(p, v);
    } else {
      NURL_ASSIGN(Item v, xml_value(schema, where));
      p.push_back(v);
    }
    b_.append(p, f_.value_close);
    if (f_.syntax == CallSyntax::xml_nested) {
      b_.append(p, k);
      b_.append(p, f_.key_close);
    }
    return p;
  }

  // xml_nested (MiniMax-M3): an object with properties is its members as elements, an array with
  // items its items as elements named "item"; anything else is written as in xml_params.
  Result<Seq> nested_value(const Json& schema, const std::string& where, int depth) {
    constexpr int kMaxDepth = 16;
    if (depth > kMaxDepth) return Error(Code::invalid_argument, where + ": nested too deeply");
    auto says = [&](const char* t) { return schema.is_object() && schema.contains("type") && schema["type"] == t; };
    if (says("object") && schema.contains("properties") && schema["properties"].is_object()) {
      // One member called "item" would read back as an array of one.
      if (schema["properties"].contains("item") && schema["properties"].size() == 1)
        return Error(Code::invalid_argument, where + ": an object whose only property is \"item\" cannot be written in the " +
                                                 std::string(f_.family) + " format");
      NURL_ASSIGN(Seq m, xml_members(schema, where, depth + 1));
      m.push_back(j_.ws());
      return m;
    }
    if (says("array") && schema.contains("items") && schema["items"].is_object()) {
      auto bound = [&](const char* key, uint32_t dflt) {
        return schema.contains(key) && schema[key].is_number_unsigned() ? schema[key].get<uint32_t>() : dflt;
      };
      const uint32_t lo = bound("minItems", 0), hi = bound("maxItems", grammar::kUnbounded);
      if (lo > hi) return Error(Code::invalid_argument, where + ": contradictory bounds: minItems > maxItems");
      Seq one{j_.ws()};
      NURL_ASSIGN(Seq item, xml_element("item", schema["items"], where + " item", depth + 1));
      append(one, item);
      return Seq{b_.repeat(std::move(one), lo, hi, "items"), j_.ws()};
    }
    NURL_ASSIGN(Item v, xml_value(schema, where));
    return Seq{v};
  }

  const ToolFormat& f_;
  Builder& b_;
  grammar::JsonRules& j_;
  std::optional<RuleId> raw_char_;
};

}  // namespace

Result<grammar::Grammar> tool_call_grammar(const ToolFormat& f, const Json& tools, const ToolGrammarOptions& opts,
                                           const grammar::Limits& limits) {
  if (!tools.is_array() || tools.empty()) return Error(Code::invalid_argument, "a tool call is required but no tools were given");
  std::vector<Function> fns;
  for (const auto& t : tools) {
    const Json& fn = t.is_object() && t.contains("function") ? t["function"] : t;
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string())
      return Error(Code::invalid_argument, "every tool needs a function name");
    Function x{fn["name"].get<std::string>(), fn.contains("parameters") ? fn["parameters"] : Json{{"type", "object"}}};
    if (x.parameters.is_object() && !x.parameters.contains("type") && !x.parameters.contains("properties"))
      x.parameters["type"] = "object";
    if (opts.only.empty() || x.name == opts.only) fns.push_back(std::move(x));
  }
  if (fns.empty()) return Error(Code::invalid_argument, "tool_choice names \"" + std::string(opts.only) + "\", which is not among the tools");

  Builder b(limits);
  grammar::JsonRules j(b);
  CallBuilder cb(f, b, j);
  std::vector<Seq> alts;
  for (const Function& fn : fns) {
    NURL_ASSIGN(Seq s, cb.call(fn));
    alts.push_back(std::move(s));
  }
  const Item one = b.ref(b.rule("call", std::move(alts)));
  const uint32_t more = opts.parallel ? kMaxForcedCalls - 1 : 0;

  Seq seq;
  if (f.syntax == CallSyntax::json_array) {
    seq = b.literal(f.block_open);
    seq.insert(seq.end(), {j.ws(), b.byte('['), j.ws(), one, b.repeat({j.ws(), b.byte(','), j.ws(), one}, 0, more, "more-calls"),
                           j.ws(), b.byte(']')});
    if (!f.block_close.empty()) {
      seq.push_back(j.ws());
      b.append(seq, f.block_close);
    }
  } else if (f.syntax == CallSyntax::json_object) {
    Seq unit;
    if (!f.block_open.empty()) {
      unit = b.literal(f.block_open);
      unit.insert(unit.end(), {j.ws(), one});
      if (!f.block_close.empty()) {
        unit.push_back(j.ws());
        b.append(unit, f.block_close);
      }
    } else {
      unit = {one};
    }
    const Item u = b.ref(b.rule("unit", {unit}));
    Seq sep = f.block_open.empty() ? Seq{j.ws(), b.byte(';'), j.ws(), u} : Seq{j.ws(), u};
    seq = {u, b.repeat(std::move(sep), 0, more, "more-calls")};
  } else {
    seq = b.literal(f.block_open);
    if (!f.block_open.empty()) seq.push_back(j.ws());
    seq.insert(seq.end(), {one, b.repeat({j.ws(), one}, 0, more, "more-calls")});
    if (!f.block_close.empty()) {
      seq.push_back(j.ws());
      b.append(seq, f.block_close);
    }
  }
  // Nothing before the first call: a forced reply is calls only, with no text (not even
  // whitespace) for the APIs to report beside them.
  return b.build(b.rule("root", {seq}));
}

}  // namespace nurl::chat
