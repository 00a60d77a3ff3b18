// allOf as one schema: the branches (with $ref targets inlined) merged keyword by keyword
// (types intersected, properties united with conflicting ones nested as allOf, required united,
// additionalProperties: false keeps only the properties its branch declares, bounds tightened,
// enums intersected, anyOf lists multiplied). Keywords that cannot be merged (two different
// patterns or formats, different consts) are an Error naming them.
#pragma once

#include <initializer_list>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nurl::grammar {

// A local JSON pointer ("#", "#/$defs/node", ...) into the schema document.
Result<const nlohmann::ordered_json*> resolve_pointer(const nlohmann::ordered_json& root, const std::string& ref);

// Whether the schema has a validation keyword other than those in `ignore`.
bool has_validation(const nlohmann::ordered_json& s, std::initializer_list<const char*> ignore);

// `s` with its allOf merged into it (and the result free of allOf at the top level).
Result<nlohmann::ordered_json> merge_schemas(const nlohmann::ordered_json& root, const nlohmann::ordered_json& s,
                                             int max_depth);

}  // namespace nurl::grammar
