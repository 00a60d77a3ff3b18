// JSON Schema → Grammar. Supported: type (one or a list), properties / required /
// additionalProperties (absent: not generated when properties are declared, so the output is
// valid either way), items / prefixItems / minItems / maxItems, enum / const, strings with
// minLength / maxLength, pattern (regex.h) or format (date-time, date, time, uuid, email,
// hostname, ipv4, uri), numbers and integers with minimum / maximum / exclusive bounds (draft 4
// booleans too), boolean, null, nullable, anyOf / oneOf (as alternatives: overlapping oneOf
// branches are not detected), allOf (merged), $ref to "#..." pointers and $defs / definitions,
// recursion included. Properties are generated in declaration order. Annotations (title,
// description, default, examples, $schema, $id, $comment, ...) and unknown keywords are ignored.
// Validation keywords we cannot honour (not, if/then/else, patternProperties, propertyNames,
// dependent*, unevaluated*, contains, uniqueItems: true, multipleOf other than 1, remote $ref)
// are an Error naming the keyword and where it is, never a silent fall-back.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/json-rules.h"

namespace nurl::grammar {

struct SchemaLimits {
  int max_depth = 64;         // nesting of the schema document itself
  size_t max_branches = 256;  // alternatives an allOf of anyOfs may multiply into
};

// Rule item for one document valid against `schema` (no whitespace around it).
Result<Item> compile_schema(JsonRules& rules, const nlohmann::ordered_json& schema, const SchemaLimits& limits = {});

// The pattern a string format stands for ("date-time", "uuid", ...), or nullopt when unsupported.
std::optional<std::string> format_pattern(std::string_view format);

// The grammar of a `format` value: "json" (any JSON value) or a JSON schema's text; the document
// may be preceded by bounded whitespace (after a thinking block, models often start a line).
Result<Grammar> compile_format(std::string_view format, const Limits& limits = {});

}  // namespace nurl::grammar
