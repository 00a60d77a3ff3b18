// Jinja2 lexer with Hugging Face's settings (trim_blocks, lstrip_blocks, no trailing newline).
// It reproduces Jinja2's whitespace rules exactly: `{%-`/`-%}` strip all whitespace on that side,
// trim_blocks eats one newline after `%}`/`#}`, lstrip_blocks removes spaces and tabs before a
// block or comment tag that starts a line, `{%+`/`+%}` opt out. Newlines are normalised to "\n".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl::jinja {

enum class Tok : uint8_t { text, var_begin, var_end, block_begin, block_end, name, string, integer, floating, op, eof };

struct Token {
  Tok type = Tok::eof;
  std::string value;  // text, name, unescaped string, number digits (no '_'), operator
  int line = 1;
  int col = 1;
};

// Tokens of the whole template; ends with one eof token. `{% raw %}` bodies come out as text.
Result<std::vector<Token>> lex(std::string_view source);

}  // namespace nurl::jinja
