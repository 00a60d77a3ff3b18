// Regex pre-tokenizers for byte-level BPE, chosen by tokenizer.ggml.pre. A pre-tokenizer is a
// list of patterns applied in turn: each pattern splits every current piece into its matches and
// the gaps between them (both kept), so the pieces always tile the input. Patterns are PCRE2 with
// UTF+UCP (Unicode categories for all of Unicode), JIT-compiled once; matching is thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl::tokenizer_detail {

struct Span {
  size_t begin = 0;
  size_t end = 0;
};

// What a pre-tokenizer name implies besides its patterns (llama.cpp's per-name settings).
struct PreTokenizerTraits {
  bool clean_spaces = true;    // detokenizer removes the space in " ," " ." " 's" ...
  bool ignore_merges = false;  // a whole piece that is a token is emitted without merging
  bool add_bos = false;        // default for tokenizer.ggml.add_bos_token
};

class PreTokenizer {
 public:
  // `pre` is tokenizer.ggml.pre ("" = default). Errors: unknown name, or a pattern that fails
  // to compile (a bug, reported with the pattern's position).
  static Result<std::shared_ptr<const PreTokenizer>> create(std::string_view pre);
  const PreTokenizerTraits& traits() const { return traits_; }
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // Splits valid UTF-8 `text` into pieces (byte spans, in order, covering all of text).
  void split(std::string_view text, std::vector<Span>& out) const;

  // Names accepted by create() (for error messages and docs).
  static std::string known_names();

  // One name per pre-tokenizer family (the first of its aliases), for identifying the family of a
  // foreign tokenizer by comparing splits.
  static std::vector<std::string> family_names();
  // A pre-tokenizer from arbitrary patterns (as another tokenizer's files state them), applied in
  // turn like a family's; traits are left at their defaults. Errors name the pattern and offset.
  static Result<std::shared_ptr<const PreTokenizer>> from_patterns(const std::vector<std::string>& patterns);

 private:
  PreTokenizer() = default;
  static Result<std::shared_ptr<const PreTokenizer>> compile(const std::vector<std::string>& patterns,
                                                             const PreTokenizerTraits& traits, std::string_view what);
  struct Pattern;
  PreTokenizerTraits traits_;
  std::vector<std::unique_ptr<Pattern>> patterns_;
};

}  // namespace nurl::tokenizer_detail
