// Field parsers shared by the OpenAI request parsers (openai.cpp, openai-responses.cpp).
// Internal to common/api.
#pragma once

#include <optional>
#include <string>

#include "api/openai.h"

namespace nurl::api::openai {

Result<std::string> parse_model(const Json& j);
// model, stream, stream_options, the extensions, then OpenAI's sampling fields over options{}:
// temperature, top_p, presence/frequency_penalty, seed, stop, max_tokens / max_completion_tokens /
// max_output_tokens (→ num_predict).
Result<void> parse_common(const Json& j, Common* c);
// A response format object of `type` ("text", "json_object", "json_schema" with "schema" in obj),
// read from the body's ordered parse (the schema keeps its key order).
Result<void> parse_format(const std::string& type, const OrderedJson& obj, const std::string& where,
                          StructuredFields* s);
// tool_choice ("auto", "none", "required" or an object naming one function: chat's
// {"type":"function","function":{"name"}} when `nested`, else the Responses API's
// {"type":"function","name"}) and parallel_tool_calls; a named function must be among the tools.
Result<void> parse_tool_choice(const Json& j, bool nested, StructuredFields* s);
// "none", "minimal", "low", "medium", "high" → think.
Result<void> parse_reasoning_effort(const Json* v, const std::string& where, StructuredFields* s);

}  // namespace nurl::api::openai
