// How a model writes tool calls and reasoning in its replies: a table of formats, one row per
// template family, chosen once per template from its source (detect_reply_format), plus the
// template variables that switch thinking. A new family is a row here; the scanning code
// (reply-parser) and the call grammar (tool-grammar) read rows and never name a family.
//
// A reply may hold calls in a *block* (block_open ... block_close) containing one or more
// *calls* (call_open ... call_close); either level may be absent. Inside a call the syntax says
// how name and arguments are written:
//   json_object  {"<name_key>": "f", "<args_key>": {...}}   (a block holding one call, or bare)
//   json_array   [{...}, {...}]                             (json_object entries)
//   name_json    <name><name_end>{...}                      (arguments as a JSON object)
//   xml_params   <name><name_end> (key_open k key_close [value_open] v value_close)*
//   xml_nested   <name><name_end> (key_open k key_close v value_close k key_close)*, where v is
//                raw text or more such elements (an object; elements named "item": an array)
//   pythonic     [f(a=1, b='x'), g()]
//   gemma        call:f{a:<|"|>x<|"|>,b:1}
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>

namespace nurl::chat {

// `unsupported` marks a family we recognise but do not parse (so it is not mistaken for another).
enum class CallSyntax : uint8_t { json_object, json_array, name_json, xml_params, xml_nested, pythonic, gemma, unsupported };

struct ToolFormat {
  std::string_view family;
  std::array<std::string_view, 2> detect;  // every non-empty one must occur in the template
  std::string_view block_open, block_close;
  std::string_view call_open, call_close;
  CallSyntax syntax = CallSyntax::json_object;
  std::string_view name_key = "name", args_key = "arguments";  // json kinds ("parameters" is also read)
  std::string_view id_end;    // name_json: the call starts with an id ending here (then the name)
  std::string_view name_end;  // name_json, xml_params: what follows the name
  std::string_view key_open, key_close, value_open, value_close;  // xml_params
  std::string_view alt_open;  // a second marker that also opens a block (Llama's <|python_tag|>)
  bool bare = false;          // the reply itself may be the call (no marker: Llama 3's JSON)
  bool strip_name = false;    // names written as "functions.f:0" (Kimi)
  std::string_view text_name; // a call of this name is plain text (functionary's ">>>all")
};

struct ThinkFormat {
  std::string_view family;
  std::string_view open, close;
};

struct ReplyFormat {
  const ToolFormat* tools = nullptr;   // null: no tool-call format we know
  const ThinkFormat* think = nullptr;  // null: no reasoning blocks
  bool uses_tools = false;             // the template reads `tools` (so definitions reach the model)
  std::string think_var;               // variable switching thinking: "enable_thinking", "thinking", or ""
  bool think_levels = false;           // the template takes `reasoning_effort`
  bool uses_suffix = false;            // fill-in-the-middle: the template reads `suffix`

  bool can_call_tools() const { return tools && uses_tools; }
  bool can_think() const { return think != nullptr; }
};

ReplyFormat detect_reply_format(std::string_view template_source);

std::span<const ToolFormat> tool_formats();
std::span<const ThinkFormat> think_formats();

}  // namespace nurl::chat
