// UTF-8 helpers shared by the tokenizer, the streaming decoder and the HTTP layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nurl::utf8 {

// Length of the sequence announced by a lead byte (1..4), or 0 for a continuation/invalid byte.
size_t seq_len(uint8_t lead);

// True when s is well-formed UTF-8 (no overlongs, no surrogates, ≤ U+10FFFF).
bool valid(std::string_view s);

// Number of leading bytes of s that form complete characters. Trailing bytes that could still
// become a valid character once more bytes arrive are excluded; invalid bytes count as complete
// (they will never become valid, so holding them back would stall a stream forever).
size_t complete_prefix(std::string_view s);

// Decodes one code point at s[i], advancing i. Invalid input yields U+FFFD and advances one byte.
char32_t decode(std::string_view s, size_t& i);

// Appends the UTF-8 encoding of cp.
void append(std::string& out, char32_t cp);

}  // namespace nurl::utf8
