// One conversation turn as the OpenAI and Anthropic parsers hand it to the daemon: the role, its
// text, and what tool-using conversations add (an assistant's calls and reasoning, a tool's
// result). The daemon turns these into its scheduler's chat messages one to one.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "api/json-fields.h"

namespace nurl::api {

struct ToolCallTurn {
  std::string id;         // the call's id ("call_…", "toolu_…"); results refer to it
  std::string name;       // the function
  std::string arguments;  // the arguments object as JSON text
};

struct ChatTurn {
  std::string role;  // system, user, assistant, tool
  std::string content;
  std::string thinking;                   // assistant: earlier reasoning
  std::vector<ToolCallTurn> tool_calls;   // assistant: earlier calls
  std::string tool_call_id;               // tool: which call this result answers
  std::string tool_name;                  // tool: the function that call named (when known)
};

// Content as a string, or an array of parts whose "type" is one of `text_types` (their "text"
// fields are joined with newlines) or `skipped_types` (ignored); any other part is an error that
// names it (`where`: "messages[2].content"). Images and audio are refused: text models only.
Result<std::string> joined_text(const Json& content, const std::string& where,
                                std::initializer_list<std::string_view> text_types,
                                std::initializer_list<std::string_view> skipped_types = {});

// Sets tool_name on tool results from the earlier assistant call with the same id.
void fill_tool_names(std::vector<ChatTurn>& turns);

// Fields that ask for structured output, tools, thinking and logprobs, in the scheduler's terms
// (see sched::Job): every API parses its own spelling into this.
struct StructuredFields {
  std::string format;                // "" free text, "json" any JSON value, else a JSON schema (JSON text)
  std::string tools;                 // JSON array of {"type":"function","function":{...}}, "" for none
  std::string tool_choice = "auto";  // "auto", "none", "required" or a function's name
  bool parallel_tool_calls = true;
  std::string think;                 // "" template default; "true", "false", "low", "medium", "high"
  int think_budget = 0;              // > 0: reasoning tokens before the engine closes the block
  int top_logprobs = -1;             // -1 none; 0..20 alternatives per token
};

// One function tool in the shape the scheduler takes (OpenAI chat's):
// {"type":"function","function":{"name","description","parameters"}}. The name must be 1-64 of
// [A-Za-z0-9_-]; parameters, when given, a JSON object. Read from the body's ordered parse, so the
// schema keeps the client's key order. `where` prefixes errors ("tools[2]").
Result<OrderedJson> function_tool(const OrderedJson* name, const OrderedJson* description,
                                  const OrderedJson* parameters, const std::string& where);

// A tool_choice that names a function must name one of the tools; "required" needs tools.
Result<void> check_tool_choice(const StructuredFields& s);

}  // namespace nurl::api
