#include "api/chat-turn.h"

#include <map>

#include "core/json-text.h"

namespace nurl::api {

Result<std::string> joined_text(const Json& content, const std::string& where,
                                std::initializer_list<std::string_view> text_types,
                                std::initializer_list<std::string_view> skipped_types) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) return bad_field(where, "a string or an array of text parts");
  auto among = [](const std::string& t, std::initializer_list<std::string_view> set) {
    for (auto s : set)
      if (s == t) return true;
    return false;
  };
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& p = content[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    const std::string type = string_or(p, "type");
    if (among(type, skipped_types)) continue;
    if (!among(type, text_types))
      return Error(Code::invalid_argument, at + ": parts of type \"" + type +
                                               "\" are not supported here (this server runs text models)");
    const Json* t = field(p, "text");
    if (!t || !t->is_string()) return bad_field(at + ".text", "a string");
    if (!text.empty()) text += "\n";
    text += t->get<std::string>();
  }
  return text;
}

void fill_tool_names(std::vector<ChatTurn>& turns) {
  std::map<std::string, std::string> names;
  for (auto& t : turns) {
    for (const auto& c : t.tool_calls) names[c.id] = c.name;
    if (t.role == "tool" && t.tool_name.empty()) {
      auto it = names.find(t.tool_call_id);
      if (it != names.end()) t.tool_name = it->second;
    }
  }
}

Result<OrderedJson> function_tool(const OrderedJson* name, const OrderedJson* description,
                                  const OrderedJson* parameters, const std::string& where) {
  if (!name || !name->is_string()) return bad_field(where + ".name", "the function's name (a string)");
  const std::string n = name->get<std::string>();
  bool valid = !n.empty() && n.size() <= 64;
  for (char c : n)
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-');
  if (!valid) return Error(Code::invalid_argument, where + ".name: \"" + n + "\" must be 1-64 letters, digits, '_' or '-'");
  OrderedJson fn{{"name", n}};
  if (description) {
    if (!description->is_string()) return bad_field(where + ".description", "a string");
    fn["description"] = *description;
  }
  if (parameters) {
    if (!parameters->is_object()) return bad_field(where + ".parameters", "a JSON schema object");
    fn["parameters"] = *parameters;
  }
  return OrderedJson{{"type", "function"}, {"function", fn}};
}

Result<void> check_tool_choice(const StructuredFields& s) {
  const std::string& c = s.tool_choice;
  if (c == "auto" || c == "none") return ok();
  if (s.tools.empty())
    return Error(Code::invalid_argument, "tool_choice \"" + c + "\" needs tools, and the request has none");
  if (c == "required") return ok();
  Json tools = parse_json(s.tools);
  for (const auto& t : tools)
    if (t["function"]["name"] == c) return ok();
  return Error(Code::invalid_argument, "tool_choice names the function \"" + c + "\", which is not among the tools");
}

}  // namespace nurl::api
