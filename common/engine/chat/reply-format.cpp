// The tool-call and reasoning formats, one row per template family, and their detection.
// Rows are tried in order: more specific markers first (GLM and Qwen3-Coder also print
// <tool_call>, so they come before Hermes).
#include "engine/chat/reply-format.h"

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace nurl::chat {

namespace {

using S = CallSyntax;

ToolFormat row(std::string_view family, std::string_view d0, std::string_view d1, S syntax) {
  ToolFormat f;
  f.family = family;
  f.detect = {d0, d1};
  f.syntax = syntax;
  return f;
}

ToolFormat block(ToolFormat f, std::string_view open, std::string_view close) {
  f.block_open = open;
  f.block_close = close;
  return f;
}

ToolFormat call(ToolFormat f, std::string_view open, std::string_view close) {
  f.call_open = open;
  f.call_close = close;
  return f;
}

ToolFormat named(ToolFormat f, std::string_view name_end) {
  f.name_end = name_end;
  return f;
}

ToolFormat params(ToolFormat f, std::string_view key_open, std::string_view key_close, std::string_view value_open,
                  std::string_view value_close) {
  f.key_open = key_open;
  f.key_close = key_close;
  f.value_open = value_open;
  f.value_close = value_close;
  return f;
}

ToolFormat keys(ToolFormat f, std::string_view name_key, std::string_view args_key) {
  f.name_key = name_key;
  f.args_key = args_key;
  return f;
}

const std::vector<ToolFormat>& table() {
  static const std::vector<ToolFormat> t = [] {
    std::vector<ToolFormat> v;
    // DeepSeek V3.2 / V4 (DSML markup).
    v.push_back(params(named(call(block(row("deepseek-dsml-v4", "｜DSML｜", "+ 'tool_calls>", S::xml_params),
                                        "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"),
                                  "<｜DSML｜invoke name=\"", "</｜DSML｜invoke>"),
                             "\">"),
                       "<｜DSML｜parameter name=\"", "\"", ">", "</｜DSML｜parameter>"));
    v.push_back(params(named(call(block(row("deepseek-dsml", "｜DSML｜", "+ 'function_calls>", S::xml_params),
                                        "<｜DSML｜function_calls>", "</｜DSML｜function_calls>"),
                                  "<｜DSML｜invoke name=\"", "</｜DSML｜invoke>"),
                             "\">"),
                       "<｜DSML｜parameter name=\"", "\"", ">", "</｜DSML｜parameter>"));
    // DeepSeek V3 / R1 (function<sep>name + fenced JSON) and V3.1 (name<sep>JSON).
    v.push_back(named(call(block(row("deepseek-v3", "<｜tool▁sep｜>", "```json", S::name_json), "<｜tool▁calls▁begin｜>",
                                 "<｜tool▁calls▁end｜>"),
                           "<｜tool▁call▁begin｜>function<｜tool▁sep｜>", "```<｜tool▁call▁end｜>"),
                      "\n```json\n"));
    v.push_back(named(call(block(row("deepseek-v3.1", "<｜tool▁sep｜>", "", S::name_json), "<｜tool▁calls▁begin｜>",
                                 "<｜tool▁calls▁end｜>"),
                           "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
                      "<｜tool▁sep｜>"));
    {
      ToolFormat k = named(call(block(row("kimi-k2", "<|tool_call_begin|>", "", S::name_json),
                                      "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
                                "<|tool_call_begin|>", "<|tool_call_end|>"),
                           "<|tool_call_argument_begin|>");
      k.strip_name = true;
      v.push_back(k);
    }
    {
      ToolFormat s = named(call(block(row("solar", "<|tool_call:begin|>", "", S::name_json), "<|tool_calls|>", "<|calls|>"),
                                "<|tool_call:begin|>", "<|tool_call:end|>"),
                           "<|tool_call:args|>");
      s.id_end = "<|tool_call:name|>";
      v.push_back(s);
    }
    v.push_back(params(named(call(block(row("hunyuan", "HYTK", "tool_sep", S::xml_params), "<tool_calls:opensource>",
                                        "</tool_calls:opensource>"),
                                  "<tool_call:opensource>", "</tool_call:opensource>"),
                             "<tool_sep:opensource>"),
                       "<arg_key:opensource>", "</arg_key:opensource>", "<arg_value:opensource>",
                       "</arg_value:opensource>"));
    // GLM-4.5/4.6/4.7 and Laguna: the name right after <tool_call>, then key/value pairs.
    v.push_back(params(call(row("glm", "<arg_key>", "", S::xml_params), "<tool_call>", "</tool_call>"), "<arg_key>",
                       "</arg_key>", "<arg_value>", "</arg_value>"));
    v.push_back(params(named(call(block(row("seed-oss", "<seed:tool_call>", "", S::xml_params), "<seed:tool_call>",
                                        "</seed:tool_call>"),
                                  "<function=", "</function>"),
                             ">"),
                       "<parameter=", ">", "", "</parameter>"));
    v.push_back(params(named(call(block(row("qwen3-coder", "<function=", "<parameter=", S::xml_params), "<tool_call>",
                                        "</tool_call>"),
                                  "<function=", "</function>"),
                             ">"),
                       "<parameter=", ">", "", "</parameter>"));
    // MiniMax-M3: every tag behind its namespace token, arguments as nested XML elements.
    v.push_back(params(named(call(block(row("minimax-m3", "]<]minimax[>[", "", S::xml_nested), "]<]minimax[>[<tool_call>",
                                        "]<]minimax[>[</tool_call>"),
                                  "]<]minimax[>[<invoke name=\"", "]<]minimax[>[</invoke>"),
                             "\">"),
                       "]<]minimax[>[<", ">", "", "]<]minimax[>[</"));
    v.push_back(params(named(call(block(row("minimax-m2", "<minimax:tool_call>", "", S::xml_params),
                                        "<minimax:tool_call>", "</minimax:tool_call>"),
                                  "<invoke name=\"", "</invoke>"),
                             "\">"),
                       "<parameter name=\"", "\">", "", "</parameter>"));
    v.push_back(params(named(call(row("minicpm", "<param name=", "", S::xml_params), "<function name=\"", "</function>"),
                             "\">"),
                       "<param name=\"", "\">", "", "</param>"));
    v.push_back(named(call(row("functionary-v3.1", "<function=", "<|start_header_id|>", S::name_json), "<function=",
                           "</function>"),
                      ">"));
    {
      ToolFormat f = named(call(row("functionary-v3.2", ">>>", "recipient", S::name_json), ">>>", ""), "\n");
      f.text_name = "all";
      v.push_back(f);
    }
    v.push_back(named(call(row("mistral-v11", "[TOOL_CALLS]", "[ARGS]", S::name_json), "[TOOL_CALLS]", ""), "[ARGS]"));
    v.push_back(block(row("mistral", "[TOOL_CALLS]", "", S::json_array), "[TOOL_CALLS]", ""));
    v.push_back(block(row("granite", "<|tool_call|>", "", S::json_array), "<|tool_call|>", ""));
    v.push_back(block(row("apriel", "<tool_calls>", "", S::json_array), "<tool_calls>", "</tool_calls>"));
    v.push_back(keys(block(row("command-r7b", "<|START_ACTION|>", "", S::json_array), "<|START_ACTION|>", "<|END_ACTION|>"),
                     "tool_name", "parameters"));
    v.push_back(keys(block(row("command-r", "Action:", "tool_name", S::json_array), "Action:", ""), "tool_name",
                     "parameters"));
    v.push_back(block(row("firefunction", "functools", "", S::json_array), "functools", ""));
    v.push_back(call(row("gemma4", "<|tool_call>", "", S::gemma), "<|tool_call>", "<tool_call|>"));
    v.push_back(block(row("lfm2.5", "<|tool_call_start|>", "", S::pythonic), "<|tool_call_start|>", "<|tool_call_end|>"));
    v.push_back(block(row("lfm2", "<|tool_list_start|>", "", S::pythonic), "<|tool_call_start|>", "<|tool_call_end|>"));
    v.push_back(block(row("gigachat", "function call", "<|role_sep|>", S::json_object), "function call<|role_sep|>", ""));
    // Hermes, Qwen2.5/Qwen3/QwQ, Granite 4, MiMo, Bielik, Reka.
    v.push_back(block(row("hermes", "<tool_call>", "", S::json_object), "<tool_call>", "</tool_call>"));
    {
      ToolFormat l = keys(row("llama3", "<|start_header_id|>", "\"parameters\"", S::json_object), "name", "parameters");
      l.bare = true;
      l.alt_open = "<|python_tag|>";
      v.push_back(l);
    }
    return v;
  }();
  return t;
}

const std::vector<ThinkFormat>& thinks() {
  static const std::vector<ThinkFormat> t = {
      {"seed", "<seed:think>", "</seed:think>"},
      {"minimax-m3", "<mm:think>", "</mm:think>"},
      {"mistral", "[THINK]", "[/THINK]"},
      {"cohere", "<|START_THINKING|>", "<|END_THINKING|>"},
      {"gemma4", "<|channel>thought", "<channel|>"},
      {"think", "<think>", "</think>"},
  };
  return t;
}

bool has(std::string_view src, std::string_view s) { return s.empty() || src.find(s) != std::string_view::npos; }

// Characters as the template language sees them (ASCII, whatever the C locale).
bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool space_char(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

// Calls f(pos) for each place `word` starts in src with no word character right after it, until
// f returns true; returns whether one did.
template <class F>
bool any_whole_word(std::string_view src, std::string_view word, F&& f) {
  for (size_t pos = src.find(word); pos != std::string_view::npos; pos = src.find(word, pos + 1)) {
    const size_t end = pos + word.size();
    if ((end == src.size() || !word_char(src[end])) && f(pos, end)) return true;
  }
  return false;
}

// `name` used as a template variable: not a field (`.name`), not inside a string literal's
// opening quote, not the tail of a longer name.
bool uses_variable(std::string_view src, std::string_view name) {
  return any_whole_word(src, name, [&](size_t pos, size_t) {
    if (pos == 0) return true;
    const char c = src[pos - 1];
    return !word_char(c) && c != '.' && c != '\'' && c != '"';
  });
}

// Skips one or more spaces at `at`; npos when there are none.
size_t skip_spaces(std::string_view src, size_t at) {
  size_t i = at;
  while (i < src.size() && space_char(src[i])) ++i;
  return i > at ? i : std::string_view::npos;
}

// `v` tested as a switch: `if v`, `not v`, `elif v`, `and v`, `or v`, or `v is [not] defined`
// / `v is [not] undefined`.
bool tests_variable(std::string_view src, std::string_view v) {
  return any_whole_word(src, v, [&](size_t pos, size_t end) {
    size_t k = pos;
    while (k > 0 && space_char(src[k - 1])) --k;
    if (k < pos) {  // "if" also matches the end of "elif" (and of "endif", as the pattern did)
      const std::string_view before = src.substr(0, k);
      for (std::string_view kw : {"if", "not", "and", "or"})
        if (before.ends_with(kw)) return true;
    }
    if (pos > 0 && word_char(src[pos - 1])) return false;
    size_t i = skip_spaces(src, end);
    if (i == std::string_view::npos || src.substr(i, 2) != "is") return false;
    i = skip_spaces(src, i + 2);
    if (i == std::string_view::npos) return false;
    if (src.substr(i, 3) == "not") {
      const size_t j = skip_spaces(src, i + 3);
      if (j != std::string_view::npos) i = j;
    }
    const std::string_view rest = src.substr(i);
    return rest.starts_with("defined") || rest.starts_with("undefined");
  });
}

}  // namespace

std::span<const ToolFormat> tool_formats() { return table(); }
std::span<const ThinkFormat> think_formats() { return thinks(); }

ReplyFormat detect_reply_format(std::string_view template_source) {
  ReplyFormat r;
  const std::string src(template_source);
  for (const ToolFormat& f : table()) {
    if (has(src, f.detect[0]) && has(src, f.detect[1])) {
      if (f.syntax != CallSyntax::unsupported) r.tools = &f;
      break;
    }
  }
  for (const ThinkFormat& f : thinks()) {
    if (has(src, f.open) || has(src, f.close)) {
      r.think = &f;
      break;
    }
  }
  r.uses_tools = uses_variable(src, "tools");
  r.uses_suffix = uses_variable(src, "suffix");
  r.think_levels = uses_variable(src, "reasoning_effort");
  for (const char* v : {"enable_thinking", "thinking", "reasoning"}) {
    if (tests_variable(src, v)) {
      r.think_var = v;
      break;
    }
  }
  return r;
}

}  // namespace nurl::chat
