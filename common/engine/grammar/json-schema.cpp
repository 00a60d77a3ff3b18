// JSON Schema compiler (see json-schema.h). One rule per schema node; $ref targets get one rule
// each (declared before they are compiled, which is what makes recursion work).
#include "engine/grammar/json-schema.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/json-text.h"
#include "engine/grammar/regex.h"
#include "engine/grammar/schema-merge.h"

namespace nurl::grammar {

namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string_view> kUnsupported = {
    "not",        "if",           "then",          "else",           "patternProperties", "propertyNames",
    "dependentRequired", "dependentSchemas", "dependencies", "unevaluatedProperties", "unevaluatedItems",
    "contains",   "minContains",  "maxContains",   "$dynamicRef",    "$recursiveRef"};

// Formats as patterns over the decoded string (anchored).
const std::map<std::string_view, std::string_view> kFormats = {
    {"date", "^[12]\\d{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))$"},
    {"time", "^(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$"},
    {"date-time",
     "^[12]\\d{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))"
     "T(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d{1,6})?(?:Z|[+-](?:[01]\\d|2[0-3]):[0-5]\\d)$"},
    {"uuid", "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"},
    {"email",
     "^[a-zA-Z0-9_+-]{1,32}(?:\\.[a-zA-Z0-9_+-]{1,32}){0,3}@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,30}[a-zA-Z0-9])?"
     "(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,30}[a-zA-Z0-9])?){0,3}\\.[a-zA-Z]{2,8}$"},
    {"hostname", "^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?){0,4}$"},
    {"ipv4", "^(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}$"},
    {"uri",
     "^https?://[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?){0,4}"
     "(?:/[a-zA-Z0-9._~-]{1,32}){0,6}$"},
};

// Keys of additional properties: a safe alphabet, so a declared key can be excluded exactly.
constexpr uint32_t kMaxExtraKey = 32;
bool key_char(unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; }

class SchemaCompiler {
 public:
  SchemaCompiler(JsonRules& j, const Json& root, const SchemaLimits& limits)
      : j_(j), b_(j.builder()), root_(root), limits_(limits) {}

  Result<Item> value(const Json& s, const std::string& path) {
    if (++depth_ > limits_.max_depth) {
      --depth_;
      return Error(Code::invalid_argument, "the schema is nested too deeply at " + path + " (limit " +
                                               std::to_string(limits_.max_depth) + ")");
    }
    auto r = value_inner(s, path);
    --depth_;
    return r;
  }

 private:
  Error bad(const std::string& path, const std::string& what) {
    return Error(Code::invalid_argument, "schema " + path + ": " + what);
  }

  Result<Item> value_inner(const Json& s, const std::string& path) {
    if (b_.over_limits()) return bad(path, "the schema is too large to compile");
    if (s.is_boolean()) return s.get<bool>() ? j_.any_value() : nothing(path);
    if (!s.is_object()) return bad(path, "a schema must be an object or a boolean");
    for (const auto& [k, v] : s.items()) {
      if (kUnsupported.count(k)) return bad(path, "unsupported keyword \"" + k + "\"");
      if (k == "uniqueItems" && v.is_boolean() && v.get<bool>())
        return bad(path, "unsupported keyword \"uniqueItems\" (true)");
      if (k == "multipleOf" && !(v.is_number() && v.get<double>() == 1.0))
        return bad(path, "unsupported keyword \"multipleOf\" (only 1 is supported)");
    }
    if (s.contains("$ref")) {
      if (!s["$ref"].is_string()) return bad(path, "\"$ref\" must be a string");
      if (has_validation(s, {"$ref"})) {
        NURL_ASSIGN(Json merged, merge_schemas(root_, Json{{"allOf", Json::array({without(s, {"$ref"}), Json{{"$ref", s["$ref"]}}})}},
                                               limits_.max_depth));
        return value(merged, path);
      }
      return ref(s["$ref"].get<std::string>(), path);
    }
    if (s.contains("allOf")) {
      NURL_ASSIGN(Json merged, merge_schemas(root_, s, limits_.max_depth));
      return value(merged, path + "/allOf");
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      const Json& branches = s[key];
      if (!branches.is_array() || branches.empty()) return bad(path, std::string("\"") + key + "\" must be a non-empty array");
      const Json rest = without(s, {"anyOf", "oneOf"});
      const bool narrow = has_validation(rest, {});
      if (s.contains("anyOf") && s.contains("oneOf")) return bad(path, "anyOf together with oneOf is not supported");
      std::vector<Seq> alts;
      for (size_t i = 0; i < branches.size(); ++i) {
        const std::string p = path + "/" + key + "/" + std::to_string(i);
        Json branch = branches[i];
        if (narrow) {
          NURL_ASSIGN(branch, merge_schemas(root_, Json{{"allOf", Json::array({rest, branches[i]})}}, limits_.max_depth));
        }
        NURL_ASSIGN(Item it, value(branch, p));
        alts.push_back({it});
      }
      return b_.ref(b_.rule(path + "/" + key, std::move(alts)));
    }

    std::set<std::string> types;
    if (s.contains("type")) {
      const Json& t = s["type"];
      if (t.is_string()) types.insert(t.get<std::string>());
      else if (t.is_array())
        for (const auto& x : t) {
          if (!x.is_string()) return bad(path, "\"type\" must be a string or an array of strings");
          types.insert(x.get<std::string>());
        }
      else return bad(path, "\"type\" must be a string or an array of strings");
      if (types.empty()) return bad(path, "\"type\" is an empty list");
      if (types.count("integer") && types.count("number")) types.erase("integer");
    }
    if (s.contains("const")) return literal_of({s["const"]}, types, path);
    if (s.contains("enum")) {
      if (!s["enum"].is_array()) return bad(path, "\"enum\" must be an array");
      return literal_of(std::vector<Json>(s["enum"].begin(), s["enum"].end()), types, path);
    }
    if (types.empty()) types = inferred_types(s);
    const bool nullable = s.contains("nullable") && s["nullable"].is_boolean() && s["nullable"].get<bool>();
    if (types.empty() && !nullable) return j_.any_value();
    if (nullable) types.insert("null");
    std::vector<Seq> alts;
    for (const std::string& t : types) {
      NURL_ASSIGN(Item it, typed(t, s, path));
      alts.push_back({it});
    }
    if (alts.size() == 1) return alts[0][0];
    return b_.ref(b_.rule(path + "/types", std::move(alts)));
  }

  Item nothing(const std::string& path) { return b_.ref(b_.rule(path + "/false", {})); }

  static Json without(const Json& s, std::initializer_list<const char*> keys) {
    Json out = s;
    for (const char* k : keys) out.erase(k);
    return out;
  }

  static std::set<std::string> inferred_types(const Json& s) {
    std::set<std::string> t;
    for (const char* k : {"properties", "required", "additionalProperties", "minProperties", "maxProperties"})
      if (s.contains(k)) t.insert("object");
    for (const char* k : {"items", "prefixItems", "minItems", "maxItems", "additionalItems"})
      if (s.contains(k)) t.insert("array");
    for (const char* k : {"minLength", "maxLength", "pattern", "format"})
      if (s.contains(k)) t.insert("string");
    for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
      if (s.contains(k)) t.insert("number");
    return t;
  }

  Result<Item> ref(const std::string& target, const std::string& path) {
    auto it = refs_.find(target);
    if (it != refs_.end()) return b_.ref(it->second);
    NURL_ASSIGN(const Json* node, resolve_pointer(root_, target));
    RuleId r = b_.declare("ref:" + target);
    refs_[target] = r;
    NURL_ASSIGN(Item inner, value(*node, target));
    (void)path;
    b_.define(r, {{inner}});
    return b_.ref(r);
  }

  static bool matches_type(const Json& v, const std::set<std::string>& types) {
    if (types.empty()) return true;
    if (v.is_string()) return types.count("string");
    if (v.is_boolean()) return types.count("boolean");
    if (v.is_null()) return types.count("null");
    if (v.is_object()) return types.count("object");
    if (v.is_array()) return types.count("array");
    if (v.is_number_integer() || v.is_number_unsigned() ||
        (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>()))))
      return types.count("integer") || types.count("number");
    return types.count("number");
  }

  Result<Item> literal_of(const std::vector<Json>& values, const std::set<std::string>& types, const std::string& path) {
    std::vector<std::string> texts;
    for (const Json& v : values)
      if (matches_type(v, types)) texts.push_back(JsonRules::serialize(v));
    if (texts.empty()) return bad(path, "no enum/const value matches the type");
    return b_.ref(b_.one_of(texts, path + "/enum"));
  }

  Result<Item> typed(const std::string& t, const Json& s, const std::string& path) {
    if (t == "object") return object(s, path);
    if (t == "array") return array(s, path);
    if (t == "string") return string(s, path);
    if (t == "number" || t == "integer") return number(s, t == "integer", path);
    if (t == "boolean") return j_.boolean();
    if (t == "null") return j_.null();
    return bad(path, "unknown type \"" + t + "\"");
  }

  Result<uint32_t> count(const Json& s, const char* key, uint32_t dflt, const std::string& path) {
    if (!s.contains(key)) return dflt;
    const Json& v = s[key];
    if (!(v.is_number_integer() || v.is_number_unsigned()) || v.get<int64_t>() < 0)
      return bad(path, std::string("\"") + key + "\" must be a non-negative integer");
    return static_cast<uint32_t>(std::min<int64_t>(v.get<int64_t>(), int64_t{kUnbounded} - 1));
  }

  // Member "key": value.
  Result<Seq> member(const std::string& key, const Json& schema, const std::string& path) {
    Seq s = b_.literal(JsonRules::serialize(Json(key)));
    s.push_back(j_.ws());
    s.push_back(b_.byte(':'));
    s.push_back(j_.ws());
    NURL_ASSIGN(Item v, value(schema, path));
    s.push_back(v);
    return s;
  }

  // A key of the safe alphabet that is none of `declared`.
  RuleId extra_key(const std::vector<std::string>& declared, const std::string& path) {
    std::vector<std::string> keys;
    for (const auto& k : declared)
      if (!k.empty() && k.size() <= kMaxExtraKey && std::all_of(k.begin(), k.end(), [](char c) { return key_char(static_cast<unsigned char>(c)); }))
        keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    ByteSet alphabet;
    for (unsigned c = 0; c < 128; ++c)
      if (key_char(static_cast<unsigned char>(c))) alphabet.add(static_cast<uint8_t>(c));
    RuleId key_char_rule = b_.rule(path + "/key-char", {{b_.bytes(alphabet)}});
    int n = 0;
    // Keys starting with `prefix`, given keys[lo, hi) are the declared ones that do.
    auto node = [&](auto& self, const std::string& prefix, size_t lo, size_t hi) -> RuleId {
      std::vector<Seq> alts;
      const bool declared_here = lo < hi && keys[lo] == prefix;
      if (!prefix.empty() && !declared_here) alts.push_back({});
      if (prefix.size() < kMaxExtraKey) {
        ByteSet free = alphabet;
        size_t i = lo + (declared_here ? 1 : 0);
        while (i < hi) {
          const char c = keys[i][prefix.size()];
          size_t j = i;
          while (j < hi && keys[j][prefix.size()] == c) ++j;
          free.remove(static_cast<uint8_t>(c));
          alts.push_back({b_.byte(static_cast<uint8_t>(c)), b_.ref(self(self, prefix + c, i, j))});
          i = j;
        }
        if (!free.empty()) {
          Seq s{b_.bytes(free)};
          const uint32_t rest = kMaxExtraKey - static_cast<uint32_t>(prefix.size()) - 1;
          if (rest > 0) s.push_back(b_.repeat(key_char_rule, 0, rest));
          alts.push_back(std::move(s));
        }
      }
      return b_.rule(path + "/key-" + std::to_string(++n), std::move(alts));
    };
    return node(node, "", 0, keys.size());
  }

  Result<Item> object(const Json& s, const std::string& path) {
    Json props = Json::object();
    if (s.contains("properties")) {
      if (!s["properties"].is_object()) return bad(path, "\"properties\" must be an object");
      props = s["properties"];
    }
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) return bad(path, "\"required\" must be an array of strings");
      for (const auto& r : s["required"]) {
        if (!r.is_string()) return bad(path, "\"required\" must be an array of strings");
        required.insert(r.get<std::string>());
      }
    }
    // Extra members: a schema (true = any value); absent means "not generated" when properties are
    // declared (valid either way), and any members for a bare {"type": "object"}.
    std::optional<Json> extra;
    if (s.contains("additionalProperties")) {
      const Json& a = s["additionalProperties"];
      if (a.is_boolean()) {
        if (a.get<bool>()) extra = Json(true);
      } else if (a.is_object()) {
        extra = a;
      } else {
        return bad(path, "\"additionalProperties\" must be a boolean or a schema");
      }
    } else if (props.empty() && required.empty()) {
      extra = Json(true);
    }
    for (const auto& r : required) {
      if (props.contains(r)) continue;
      if (s.contains("additionalProperties") && !extra)
        return bad(path, "required property \"" + r + "\" is not allowed by \"additionalProperties\": false");
      props[r] = extra.value_or(Json(true));
    }
    NURL_ASSIGN(uint32_t min_props, count(s, "minProperties", 0, path));
    NURL_ASSIGN(uint32_t max_props, count(s, "maxProperties", kUnbounded, path));
    if (min_props > max_props) return bad(path, "contradictory bounds: minProperties > maxProperties");
    if (min_props > required.size())
      return bad(path, "unsupported keyword \"minProperties\" (above the number of required properties)");
    if (max_props < required.size()) return bad(path, "contradictory bounds: maxProperties < required properties");
    const bool only_required = max_props < props.size() || (extra && max_props != kUnbounded);
    if (only_required && max_props != required.size())
      return bad(path, "unsupported keyword \"maxProperties\" (between the required and the declared properties)");
    if (only_required) extra.reset();

    std::vector<std::string> keys;
    std::vector<Seq> members;
    std::vector<bool> optional;
    for (const auto& [k, v] : props.items()) {
      const bool req = required.count(k) > 0;
      if (only_required && !req) continue;
      NURL_ASSIGN(Seq m, member(k, v, path + "/properties/" + k));
      keys.push_back(k);
      members.push_back(std::move(m));
      optional.push_back(!req);
    }
    const std::string base = path + "/object";
    // Tail after the declared members: extra members, if allowed. `first` = nothing emitted yet.
    Seq extra_one;
    if (extra) {
      extra_one = {b_.byte('"'), b_.ref(extra_key(keys, base)), b_.byte('"'), j_.ws(), b_.byte(':'), j_.ws()};
      NURL_ASSIGN(Item v, value(*extra, path + "/additionalProperties"));
      extra_one.push_back(v);
    }
    auto more_extra = [&]() {
      Seq more{j_.ws(), b_.byte(','), j_.ws()};
      more.insert(more.end(), extra_one.begin(), extra_one.end());
      return b_.repeat(std::move(more), 0, kUnbounded, base + "/more-extra");
    };
    // S_i: members from i on, after something was emitted; F_i: nothing emitted yet.
    RuleId s_next = extra ? b_.rule(base + "/tail", {{more_extra()}}) : b_.rule(base + "/tail", {{}});
    RuleId f_next;
    if (extra) {
      Seq first = extra_one;
      first.push_back(more_extra());
      f_next = b_.rule(base + "/tail-first", {{}, std::move(first)});
    } else {
      f_next = b_.rule(base + "/tail-first", {{}});
    }
    for (size_t i = members.size(); i-- > 0;) {
      Seq with_comma{j_.ws(), b_.byte(','), j_.ws()};
      with_comma.insert(with_comma.end(), members[i].begin(), members[i].end());
      with_comma.push_back(b_.ref(s_next));
      std::vector<Seq> s_alts{std::move(with_comma)};
      if (optional[i]) s_alts.push_back({b_.ref(s_next)});
      Seq first = members[i];
      first.push_back(b_.ref(s_next));
      std::vector<Seq> f_alts{std::move(first)};
      if (optional[i]) f_alts.push_back({b_.ref(f_next)});
      RuleId s_i = b_.rule(base + "/s" + std::to_string(i), std::move(s_alts));
      RuleId f_i = b_.rule(base + "/f" + std::to_string(i), std::move(f_alts));
      s_next = s_i;
      f_next = f_i;
    }
    return b_.ref(b_.rule(base, {{b_.byte('{'), j_.ws(), b_.ref(f_next), j_.ws(), b_.byte('}')}}));
  }

  Result<Item> array(const Json& s, const std::string& path) {
    std::vector<Json> prefix;
    std::optional<Json> rest = Json(true);
    const char* rest_key = "items";
    if (s.contains("prefixItems")) {
      if (!s["prefixItems"].is_array()) return bad(path, "\"prefixItems\" must be an array");
      prefix.assign(s["prefixItems"].begin(), s["prefixItems"].end());
    } else if (s.contains("items") && s["items"].is_array()) {  // draft 2019 and older tuples
      prefix.assign(s["items"].begin(), s["items"].end());
      rest_key = "additionalItems";
    }
    const bool tuple = !prefix.empty() || s.contains("prefixItems");
    if (s.contains(rest_key) && !(tuple && std::string_view(rest_key) == "items" && s[rest_key].is_array())) {
      const Json& r = s[rest_key];
      if (r.is_boolean() && !r.get<bool>()) rest.reset();
      else rest = r;
    } else if (tuple) {
      rest.reset();  // unconstrained rest items: valid to generate none
    }
    NURL_ASSIGN(uint32_t min_items, count(s, "minItems", 0, path));
    NURL_ASSIGN(uint32_t max_items, count(s, "maxItems", kUnbounded, path));
    if (min_items > max_items) return bad(path, "contradictory bounds: minItems > maxItems");
    if (prefix.size() > max_items) prefix.resize(max_items);
    if (!rest && min_items > prefix.size())
      return bad(path, "contradictory bounds: minItems is above the number of items allowed");
    const std::string base = path + "/array";
    std::vector<Item> items;
    for (size_t i = 0; i < prefix.size(); ++i) {
      NURL_ASSIGN(Item it, value(prefix[i], path + "/prefixItems/" + std::to_string(i)));
      items.push_back(it);
    }
    std::optional<Item> rest_item;
    if (rest && max_items > prefix.size()) {
      NURL_ASSIGN(Item it, value(*rest, path + "/" + rest_key));
      rest_item = it;
    }
    auto comma = [&](Item it) { return Seq{j_.ws(), b_.byte(','), j_.ws(), it}; };
    const uint32_t n = static_cast<uint32_t>(prefix.size());
    // After the prefix (all n emitted, n >= 1): the rest items, each after a comma.
    auto rest_after = [&](uint32_t emitted) -> Seq {
      if (!rest_item) return {};
      const uint32_t lo = min_items > emitted ? min_items - emitted : 0;
      const uint32_t hi = max_items == kUnbounded ? kUnbounded : max_items - emitted;
      return {b_.repeat(comma(*rest_item), lo, hi, base + "/more")};
    };
    std::vector<Seq> body;
    if (min_items == 0) body.push_back(b_.literal("]"));
    if (n == 0) {
      if (rest_item && max_items > 0) {
        Seq s1{*rest_item};
        Seq tail = rest_after(1);
        s1.insert(s1.end(), tail.begin(), tail.end());
        s1.push_back(j_.ws());
        s1.push_back(b_.byte(']'));
        body.push_back(std::move(s1));
      }
    } else {
      // P_i: prefix items from i on (i >= 1 emitted so far).
      Seq end_seq = rest_after(n);
      RuleId next = b_.rule(base + "/p" + std::to_string(n), {std::move(end_seq)});
      for (uint32_t i = n; i-- > 1;) {
        std::vector<Seq> alts{comma(items[i])};
        alts.back().push_back(b_.ref(next));
        if (i >= min_items) alts.push_back({});
        next = b_.rule(base + "/p" + std::to_string(i), std::move(alts));
      }
      body.push_back({items[0], b_.ref(next), j_.ws(), b_.byte(']')});
    }
    return b_.ref(b_.rule(base, {{b_.byte('['), j_.ws(), b_.ref(b_.rule(base + "/body", std::move(body)))}}));
  }

  Result<Item> string(const Json& s, const std::string& path) {
    NURL_ASSIGN(uint32_t min_len, count(s, "minLength", 0, path));
    NURL_ASSIGN(uint32_t max_len, count(s, "maxLength", kUnbounded, path));
    if (min_len > max_len) return bad(path, "contradictory bounds: minLength > maxLength");
    std::string pattern;
    if (s.contains("format")) {
      if (!s["format"].is_string()) return bad(path, "\"format\" must be a string");
      auto it = kFormats.find(s["format"].get<std::string>());
      if (it == kFormats.end()) return bad(path, "unsupported format \"" + s["format"].get<std::string>() + "\"");
      pattern = it->second;
    }
    if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) return bad(path, "\"pattern\" must be a string");
      if (!pattern.empty()) return bad(path, "\"pattern\" together with \"format\" is not supported");
      pattern = s["pattern"].get<std::string>();
    }
    if (pattern.empty()) return j_.string_length(min_len, max_len);
    if (min_len > 0 || max_len != kUnbounded)
      return bad(path, "\"pattern\" or \"format\" together with minLength/maxLength is not supported");
    auto r = compile_pattern(b_, pattern, j_.json_char(), path + "/pattern");
    if (!r.ok()) return bad(path, r.error().msg);
    return b_.ref(b_.rule(path + "/string", {{b_.byte('"'), b_.ref(*r), b_.byte('"')}}));
  }

  Result<Item> number(const Json& s, bool integer, const std::string& path) {
    std::optional<Bound> lo, hi;
    auto bound = [&](const char* key, std::optional<Bound>& out, bool exclusive, bool is_lower) -> Result<void> {
      if (!s.contains(key)) return ok();
      const Json& v = s[key];
      if (v.is_boolean()) return ok();  // draft 4 flag, handled with minimum/maximum
      auto d = Decimal::from_json(v);
      if (!d.ok()) return bad(path, std::string("\"") + key + "\": " + d.error().msg);
      Bound b{*d, exclusive};
      if (!out) {
        out = b;
      } else {
        const int c = compare(b.value, out->value);
        if ((is_lower && (c > 0 || (c == 0 && exclusive))) || (!is_lower && (c < 0 || (c == 0 && exclusive)))) out = b;
      }
      return ok();
    };
    auto draft4 = [&](const char* key) { return s.contains(key) && s[key].is_boolean() && s[key].get<bool>(); };
    NURL_TRY(bound("minimum", lo, draft4("exclusiveMinimum"), true));
    NURL_TRY(bound("exclusiveMinimum", lo, true, true));
    NURL_TRY(bound("maximum", hi, draft4("exclusiveMaximum"), false));
    NURL_TRY(bound("exclusiveMaximum", hi, true, false));
    if (s.contains("multipleOf")) integer = true;
    auto r = j_.number_in(lo, hi, integer);
    if (!r.ok()) return bad(path, r.error().msg);
    return *r;
  }

  JsonRules& j_;
  Builder& b_;
  const Json& root_;
  SchemaLimits limits_;
  std::map<std::string, RuleId> refs_;
  int depth_ = 0;
};

}  // namespace

std::optional<std::string> format_pattern(std::string_view format) {
  auto it = kFormats.find(format);
  if (it == kFormats.end()) return std::nullopt;
  return std::string(it->second);
}

Result<Item> compile_schema(JsonRules& rules, const nlohmann::ordered_json& schema, const SchemaLimits& limits) {
  SchemaCompiler c(rules, schema, limits);
  return c.value(schema, "#");
}

Result<Grammar> compile_format(std::string_view format, const Limits& limits) {
  Builder b(limits);
  JsonRules j(b);
  Item doc;
  if (format == "json") {
    doc = j.any_object();  // as ollama's "json" and OpenAI's json_object: an object, never a bare value
  } else {
    Json schema = parse_ordered_json(format);
    if (schema.is_discarded()) return Error(Code::invalid_argument, "format: not \"json\" and not a valid JSON schema");
    NURL_ASSIGN(doc, compile_schema(j, schema));
  }
  RuleId root = b.rule("root", {{j.ws(), doc}});
  return b.build(root);
}

}  // namespace nurl::grammar
