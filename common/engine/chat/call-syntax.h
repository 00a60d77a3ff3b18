// The small languages tool calls are written in, read into JSON: where a JSON value ends in a
// stream, call objects ({"name", "arguments"/"parameters"}), Python-style calls
// (f(a=1, b='x')), Gemma's call:f{a:<|"|>x<|"|>} and parameter values typed by the tool's schema.
// All of them refuse (nullopt) rather than guess on malformed input.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nurl::chat {

// JSON's whitespace (what may sit between a call's tokens).
inline bool space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

constexpr size_t kIncomplete = std::string::npos;
constexpr size_t kNotJson = std::string::npos - 1;

// End (one past) of the JSON value starting at s[pos] (leading whitespace skipped): kIncomplete
// when the text stops inside it, kNotJson when s[pos] cannot start a value.
size_t json_value_end(std::string_view s, size_t pos);

struct CallJson {
  std::string id, name;
  nlohmann::ordered_json arguments;  // an object
};

// One call object: the name under name_key (or "name"), the arguments under args_key (or
// "arguments" / "parameters"; a string holding JSON is decoded).
std::optional<CallJson> call_from_json(const nlohmann::ordered_json& v, std::string_view name_key,
                                       std::string_view args_key);
// An object or an array of them.
std::optional<std::vector<CallJson>> calls_from_json_text(std::string_view text, std::string_view name_key,
                                                          std::string_view args_key);
// [f(a=1, b='x'), g()] (brackets optional).
std::optional<std::vector<CallJson>> pythonic_calls(std::string_view text);
// call:f{a:<|"|>x<|"|>,b:1}
std::optional<CallJson> gemma_call(std::string_view text);

// A parameter value written as raw text: a string when the tool's schema says so (or when it
// is not JSON), otherwise the JSON it spells.
nlohmann::ordered_json typed_value(const nlohmann::ordered_json& tools, std::string_view function,
                                   std::string_view param, std::string_view raw);

// Arguments written as nested elements (MiniMax-M3): open + key + close_end, the value, then
// close + key + close_end. A value is raw text (typed by the function's schema where it has one)
// or more elements: an object, or an array when they are all named "item". Whitespace between
// elements is skipped.
struct NestedTags {
  std::string_view open, close_end, close;  // "NS<", ">", "NS</"
};
std::optional<nlohmann::ordered_json> nested_arguments(std::string_view body, const NestedTags& tags,
                                                       const nlohmann::ordered_json& tools, std::string_view function);

}  // namespace nurl::chat
