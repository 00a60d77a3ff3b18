// allOf merging and $ref pointers (see schema-merge.h).
#include "engine/grammar/schema-merge.h"

#include <algorithm>
#include <set>

namespace nurl::grammar {

namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string_view> kValidation = {
    "type",      "properties", "required",  "additionalProperties", "items",     "prefixItems",
    "additionalItems", "minItems", "maxItems", "uniqueItems", "enum",    "const",
    "anyOf",     "oneOf",      "allOf",     "$ref",      "minLength", "maxLength",
    "pattern",   "format",     "minimum",   "maximum",   "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "nullable",  "minProperties", "maxProperties", "not", "if", "then", "else",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "unevaluatedProperties", "unevaluatedItems", "contains", "minContains", "maxContains"};

constexpr size_t kMaxBranches = 256;

Error bad(const std::string& what) { return Error(Code::invalid_argument, "schema: allOf: " + what); }

std::set<std::string> type_set(const Json& t) {
  std::set<std::string> out;
  if (t.is_string()) out.insert(t.get<std::string>());
  if (t.is_array())
    for (const auto& x : t)
      if (x.is_string()) out.insert(x.get<std::string>());
  return out;
}

std::set<std::string> property_names(const Json& s) {
  std::set<std::string> out;
  if (s.contains("properties") && s["properties"].is_object())
    for (const auto& [k, v] : s["properties"].items()) out.insert(k);
  return out;
}

bool closed(const Json& s) {
  return s.is_object() && s.contains("additionalProperties") && s["additionalProperties"].is_boolean() &&
         !s["additionalProperties"].get<bool>();
}

Result<Json> merge_two(const Json& a, const Json& b) {
  if (a.is_boolean()) return a.get<bool>() ? b : a;
  if (b.is_boolean()) return b.get<bool>() ? a : b;
  Json r = a;
  for (const auto& [k, v] : b.items()) {
    if (!r.contains(k)) {
      r[k] = v;
      continue;
    }
    Json& x = r[k];
    if (x == v) continue;
    if (!kValidation.count(k)) continue;  // annotations: the first one wins
    if (k == "type") {
      std::set<std::string> ta = type_set(x), tb = type_set(v), both;
      for (const auto& t : ta) {
        if (tb.count(t)) both.insert(t);
        else if (t == "number" && tb.count("integer")) both.insert("integer");
        else if (t == "integer" && tb.count("number")) both.insert("integer");
      }
      if (both.empty()) return bad("the branches allow no common type");
      Json arr = Json::array();
      for (const auto& t : both) arr.push_back(t);
      x = arr.size() == 1 ? arr[0] : arr;
    } else if (k == "properties") {
      if (!x.is_object() || !v.is_object()) return bad("\"properties\" must be objects");
      for (const auto& [pk, pv] : v.items()) {
        if (!x.contains(pk)) x[pk] = pv;
        else if (x[pk] != pv) x[pk] = Json{{"allOf", Json::array({x[pk], pv})}};
      }
    } else if (k == "required") {
      for (const auto& q : v)
        if (std::find(x.begin(), x.end(), q) == x.end()) x.push_back(q);
    } else if (k == "additionalProperties" || k == "items") {
      if ((x.is_boolean() && !x.get<bool>()) || (v.is_boolean() && !v.get<bool>())) x = false;
      else if (x.is_boolean()) x = v;
      else if (!v.is_boolean()) x = Json{{"allOf", Json::array({x, v})}};
    } else if (k == "minimum" || k == "exclusiveMinimum" || k == "minLength" || k == "minItems" ||
               k == "minProperties") {
      if (!x.is_number() || !v.is_number()) return bad("conflicting \"" + k + "\"");
      if (v.get<double>() > x.get<double>()) x = v;
    } else if (k == "maximum" || k == "exclusiveMaximum" || k == "maxLength" || k == "maxItems" ||
               k == "maxProperties") {
      if (!x.is_number() || !v.is_number()) return bad("conflicting \"" + k + "\"");
      if (v.get<double>() < x.get<double>()) x = v;
    } else if (k == "enum") {
      if (!x.is_array() || !v.is_array()) return bad("\"enum\" must be arrays");
      Json both = Json::array();
      for (const auto& e : x)
        if (std::find(v.begin(), v.end(), e) != v.end()) both.push_back(e);
      x = both;
    } else if (k == "anyOf" || k == "oneOf") {
      if (!x.is_array() || !v.is_array()) return bad("\"" + k + "\" must be arrays");
      if (x.size() * v.size() > kMaxBranches) return bad("too many combinations of anyOf branches");
      Json prod = Json::array();
      for (const auto& p : x)
        for (const auto& q : v) prod.push_back(Json{{"allOf", Json::array({p, q})}});
      x = prod;
    } else if (k == "nullable") {
      x = x.is_boolean() && v.is_boolean() && x.get<bool>() && v.get<bool>();
    } else {
      return bad("conflicting values for \"" + k + "\"");
    }
  }
  // additionalProperties: false in a branch allows only that branch's declared properties.
  if (r.contains("properties") && r["properties"].is_object()) {
    std::set<std::string> required;
    if (r.contains("required") && r["required"].is_array())
      for (const auto& q : r["required"])
        if (q.is_string()) required.insert(q.get<std::string>());
    for (const Json* side : {&a, &b}) {
      if (!closed(*side)) continue;
      const std::set<std::string> allowed = property_names(*side);
      Json kept = Json::object();
      for (const auto& [pk, pv] : r["properties"].items()) {
        if (allowed.count(pk)) kept[pk] = pv;
        else if (required.count(pk)) return bad("required property \"" + pk + "\" is excluded by additionalProperties: false");
      }
      r["properties"] = kept;
    }
  }
  return r;
}

Result<Json> expand(const Json& root, const Json& s, int depth);

Result<Json> merge_list(const Json& root, const std::vector<Json>& parts, int depth) {
  Json acc = true;
  for (const Json& p : parts) {
    NURL_ASSIGN(Json e, expand(root, p, depth - 1));
    NURL_ASSIGN(acc, merge_two(acc, e));
  }
  return acc;
}

// A branch with its $ref and nested allOf resolved at the top level.
Result<Json> expand(const Json& root, const Json& s, int depth) {
  if (depth <= 0) return bad("nested too deeply (a recursive $ref inside allOf?)");
  if (!s.is_object()) return s;
  std::vector<Json> parts;
  Json rest = s;
  rest.erase("allOf");
  rest.erase("$ref");
  if (s.contains("$ref")) {
    if (!s["$ref"].is_string()) return bad("\"$ref\" must be a string");
    NURL_ASSIGN(const Json* target, resolve_pointer(root, s["$ref"].get<std::string>()));
    parts.push_back(*target);
  }
  if (s.contains("allOf")) {
    if (!s["allOf"].is_array() || s["allOf"].empty()) return bad("\"allOf\" must be a non-empty array");
    for (const auto& x : s["allOf"]) parts.push_back(x);
  }
  if (parts.empty()) return s;
  parts.insert(parts.begin(), rest);
  return merge_list(root, parts, depth);
}

}  // namespace

Result<const Json*> resolve_pointer(const Json& root, const std::string& ref) {
  if (ref.empty() || ref[0] != '#')
    return Error(Code::invalid_argument, "schema: unsupported $ref \"" + ref + "\" (only local \"#...\" references)");
  const Json* node = &root;
  size_t i = 1;
  if (i < ref.size() && ref[i] != '/')
    return Error(Code::invalid_argument, "schema: unsupported $ref \"" + ref + "\" (anchors are not supported)");
  while (i < ref.size()) {
    size_t j = ref.find('/', i + 1);
    std::string tok = ref.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
    std::string key;
    for (size_t k = 0; k < tok.size(); ++k) {
      if (tok[k] == '~' && k + 1 < tok.size() && (tok[k + 1] == '0' || tok[k + 1] == '1')) {
        key += tok[k + 1] == '0' ? '~' : '/';
        ++k;
      } else {
        key += tok[k];
      }
    }
    if (node->is_object() && node->contains(key)) {
      node = &(*node)[key];
    } else if (node->is_array() && !key.empty() && std::all_of(key.begin(), key.end(), ::isdigit) &&
               std::stoull(key.substr(0, 9)) < node->size()) {
      node = &(*node)[std::stoull(key.substr(0, 9))];
    } else {
      return Error(Code::invalid_argument, "schema: unresolvable $ref \"" + ref + "\"");
    }
    if (j == std::string::npos) break;
    i = j;
  }
  return node;
}

bool has_validation(const Json& s, std::initializer_list<const char*> ignore) {
  if (!s.is_object()) return false;
  for (const auto& item : s.items()) {
    const std::string& k = item.key();  // a reference, not a binding: the lambda captures it
    if (!kValidation.count(k)) continue;
    if (std::find_if(ignore.begin(), ignore.end(), [&](const char* x) { return k == x; }) != ignore.end()) continue;
    return true;
  }
  return false;
}

Result<Json> merge_schemas(const Json& root, const Json& s, int max_depth) { return expand(root, s, max_depth); }

}  // namespace nurl::grammar
