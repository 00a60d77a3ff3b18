// WordPiece (BERT, tokenizer.ggml.model = "bert") as llama.cpp runs it. The GGUF vocabulary
// stores word-initial pieces with a leading ▁ and continuation pieces bare ("##" removed).
// Normalisation: each code point is replaced by the first code point of its canonical
// decomposition (this drops accents: é -> e), controls and nonspacing marks are dropped, text is lowercased and split
// at whitespace; punctuation, ASCII symbols and CJK ideographs become one-character words.
// Each word is then cut greedily into the longest vocabulary pieces; a word with an unmatched
// remainder becomes [UNK]. Unicode properties come from ICU.
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "core/utf8.h"
#include "engine/tokenizer/tokenizer-impl.h"

namespace nurl::tokenizer_detail {

namespace {

// CJK Unified Ideographs blocks, as BERT's reference tokenizer defines "Chinese character".
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

bool is_control(char32_t c) {
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool is_punct(char32_t c) {
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      return true;
    default:
      return false;
  }
}

bool is_symbol(char32_t c) {
  switch (u_charType(static_cast<UChar32>(c))) {
    case U_MATH_SYMBOL:
    case U_CURRENCY_SYMBOL:
    case U_MODIFIER_SYMBOL:
    case U_OTHER_SYMBOL:
      return true;
    default:
      return false;
  }
}

std::vector<std::string> split_words(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  std::vector<std::string> words(1);
  for (size_t i = 0; i < text.size();) {
    char32_t c = utf8::decode(text, i);
    if (nfd != nullptr && U_SUCCESS(status)) {
      icu::UnicodeString d;
      if (nfd->getDecomposition(static_cast<UChar32>(c), d) && d.length() > 0)
        c = static_cast<char32_t>(d.char32At(0));
    }
    if (u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (c == 0 || c == 0xFFFD || is_control(c)) continue;
    // Combining accents left in the input (e + U+0301) are stripped like precomposed ones.
    if (u_charType(static_cast<UChar32>(c)) == U_NON_SPACING_MARK) continue;
    std::string s;
    utf8::append(s, static_cast<char32_t>(u_tolower(static_cast<UChar32>(c))));
    if (is_punct(c) || (c < 0x7F && is_symbol(c)) || is_cjk(c)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = std::move(s);
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void wpm_encode(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : split_words(text)) {
    const std::string w = "\xE2\x96\x81" + word;  // ▁ marks the start of a word
    const size_t before = out.size();
    const size_t n = w.size();
    for (size_t i = 0; i < n;) {
      bool matched = false;
      for (size_t j = std::min(n, i + t.max_token_len + 1); j > i; --j) {
        const int32_t id = t.find(std::string_view(w).substr(i, j - i));
        if (id >= 0) {
          out.push_back(id);
          i = j;
          matched = true;
          break;
        }
      }
      if (!matched) {  // the whole word becomes [UNK]
        out.resize(before);
        break;
      }
    }
    if (out.size() == before && t.unk >= 0) out.push_back(t.unk);
  }
}

}  // namespace nurl::tokenizer_detail
