// The grammar of a forced tool call (tool_choice "required" or a named function), written in the
// model's own format (a ToolFormat row): the markers, the name of one of the tools, and arguments
// valid against that tool's `parameters` schema (compiled by grammar/json-schema). The reply
// parser reads what this grammar generates back into the same call.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine/chat/reply-format.h"
#include "engine/grammar/grammar.h"

namespace nurl::chat {

struct ToolGrammarOptions {
  std::string_view only;  // a function name: only that one; "" any of the tools
  bool parallel = true;   // several calls allowed (up to kMaxForcedCalls)
};
constexpr int kMaxForcedCalls = 4;

// `tools`: the request's tool list (OpenAI shape). Errors: no such function, a format whose
// call syntax has no grammar here (Python-style and Gemma calls), or a schema that does not compile.
Result<grammar::Grammar> tool_call_grammar(const ToolFormat& f, const nlohmann::ordered_json& tools,
                                           const ToolGrammarOptions& opts, const grammar::Limits& limits = {});

}  // namespace nurl::chat
