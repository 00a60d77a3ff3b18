// Regular expressions (JSON Schema `pattern`, and our own string formats) compiled into grammar
// rules that match the JSON-encoded content of the strings the expression matches: `"` and `\`
// come out as \" and \\, control characters as \n, \t, ... or \u00XX, everything else as UTF-8.
// The subset is ECMA-262 without lookaround, backreferences, word boundaries or Unicode property
// escapes: literals, escapes (\d \w \s and their negations, \t \n \r \f \v \0 \xHH \uHHHH, escaped
// punctuation), classes with ranges and negation, `.`, groups ((...), (?:...), (?<name>...)),
// alternation and the quantifiers * + ? {n} {n,} {n,m} (lazy forms match the same strings).
// `^` and `$` may only open and close a top-level alternative; an unanchored side may carry any
// text, as `pattern` matches anywhere in the string. Unsupported syntax is an Error naming it.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engine/grammar/grammar.h"

namespace nurl::grammar {

using CodeRanges = std::vector<std::pair<uint32_t, uint32_t>>;  // inclusive code point ranges

// Alternatives matching one character of `ranges` JSON-encoded (surrogates are never produced).
std::vector<Seq> json_char_class(Builder& b, CodeRanges ranges);
// The same characters as raw UTF-8 (text that is not inside a JSON string).
std::vector<Seq> utf8_char_class(Builder& b, CodeRanges ranges);

// Rule matching the JSON-encoded content (no quotes) of every string the pattern matches.
// `any_char` is the rule for one character, used for unanchored sides. With `raw`, characters
// are plain UTF-8 instead (text outside JSON), and `excluded` code points are never produced.
Result<RuleId> compile_pattern(Builder& b, std::string_view pattern, RuleId any_char, std::string_view name,
                               bool raw = false, const CodeRanges& excluded = {});

}  // namespace nurl::grammar
