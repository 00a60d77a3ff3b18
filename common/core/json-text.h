// JSON text in and out: the one place that parses and serialises nlohmann::json values.
// Everything else builds and reads json values and calls these to go from and to text, so
// nlohmann's parser, lexer and serializer are compiled once (json-text.cpp), not in every object
// that reads or writes JSON.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace nurl {

// Bad input gives a discarded value (is_discarded()), never an exception: exactly what
// nlohmann's parse(text, nullptr, false) gives. The whole text must be one JSON value.
nlohmann::json parse_json(std::string_view text);
// The same, keeping each object's key order.
nlohmann::ordered_json parse_ordered_json(std::string_view text);

// What dump_json does with a string that is not valid UTF-8: strict throws nlohmann's
// type_error 316 (as dump() does); replace writes U+FFFD for each invalid byte sequence.
enum class InvalidUtf8 { strict, replace };

// JSON text: compact with indent < 0, else pretty with `indent` spaces; non-ASCII is kept as
// UTF-8 (no \u escapes).
std::string dump_json(const nlohmann::json& j, int indent = -1, InvalidUtf8 bad = InvalidUtf8::strict);
std::string dump_json(const nlohmann::ordered_json& j, int indent = -1, InvalidUtf8 bad = InvalidUtf8::strict);

}  // namespace nurl
