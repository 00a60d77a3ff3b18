// Tokenizer built from a GGUF file's tokenizer.ggml.* metadata alone: SentencePiece-style
// (`llama`), byte-level BPE (`gpt2`, pre-tokenizer chosen by tokenizer.ggml.pre) and WordPiece
// (`bert`). Token ids are exactly llama.cpp's for the same file (the project's oracle), including
// its quirks (see README "Tokenizer"). A Tokenizer is immutable after from_gguf(), cheap to copy
// (shared state) and safe to use from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nurl {

namespace gguf {
class File;
}

// tokenizer.ggml.token_type values (GGUF's numbering).
enum class TokenType : uint8_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,       // <s>, <|im_start|>: matched from text only with parse_special
  user_defined = 4,  // added pieces: always matched from text, before the model's own splitting
  unused = 5,
  byte = 6,  // SentencePiece byte fallback <0xNN>
};
std::string_view token_type_name(TokenType t);

enum class TokenizerModel : uint8_t {
  spm,  // tokenizer.ggml.model = "llama": score-driven merges, ▁ for spaces, <0xNN> fallback
  bpe,  // "gpt2": byte-level BPE with merge ranks and a regex pre-tokenizer
  wpm,  // "bert": WordPiece (lowercasing, accent stripping, longest-match-first)
};
std::string_view tokenizer_model_name(TokenizerModel m);

class Tokenizer {
 public:
  // Builds the tokenizer from metadata. Errors name the key and what is wrong: missing tokens,
  // array lengths that disagree, an unsupported tokenizer.ggml.model (t5/UGM, rwkv, ...) or an
  // unknown tokenizer.ggml.pre.
  static Result<Tokenizer> from_gguf(const gguf::File& f);

  // Text -> ids. add_special: prepend BOS / append EOS (WordPiece: CLS ... SEP) as the file asks
  //   (add_bos(), add_eos()). parse_special: control-token texts in `text` (e.g. "<|im_start|>")
  //   become their single id; without it they are tokenized as ordinary text. User-defined pieces
  //   are matched in both modes. Invalid UTF-8 never fails: BPE/WordPiece see U+FFFD for each bad
  //   byte (as llama.cpp does); SentencePiece falls back to byte pieces.
  // The engine feeds the model encode(prompt, /*add_special=*/true, /*parse_special=*/true).
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes of one token. Control/unknown tokens render as their text only when render_special
  // (otherwise as nothing). Byte pieces render as their single byte, so a piece may be a partial
  // UTF-8 character. Ids outside [0, n_vocab) render as nothing.
  std::string token_to_piece(int32_t id, bool render_special) const;

  // Ids -> text, as llama.cpp's detokenizer: the concatenated pieces, minus the leading space the
  // encoder adds (add_space_prefix), with the file's clean-up of spaces before punctuation
  // (clean_spaces(): gpt2-style BPE and WordPiece only). decode(encode(x)) == x whenever the
  // tokenizer is lossless for x.
  std::string decode(std::span<const int32_t> ids, bool render_special) const;

  int32_t n_vocab() const;
  TokenizerModel model() const;
  const std::string& pre() const;  // the pre-tokenizer name in effect ("default" when absent)

  // Special ids; -1 when the vocabulary has none.
  int32_t bos() const;
  int32_t eos() const;
  int32_t eot() const;
  int32_t eom() const;
  int32_t unk() const;
  int32_t sep() const;
  int32_t pad() const;
  bool add_bos() const;
  bool add_eos() const;
  bool add_space_prefix() const;
  bool clean_spaces() const;

  // End-of-generation ids: eos, eot, eom, FIM pad/repo/sep, and every token whose text is one
  // of the known turn/stream terminators (<|im_end|>, <end_of_turn>, <|end|>, <|endoftext|>,
  // <|eot_id|>, </s>, <eos>, ...). Sorted ascending.
  bool is_eog(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const;

  // Vocabulary inspection (`nurllama vocab`). token_type() is the effective type: llama.cpp
  // promotes control-looking tokens (e.g. an ordinary "</s>") to control. Ids must be in range.
  std::string_view token_text(int32_t id) const;
  TokenType token_type(int32_t id) const;
  float token_score(int32_t id) const;
  std::optional<int32_t> find_token(std::string_view text) const;

  struct Impl;

 private:
  explicit Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Turns a stream of generated ids into text that never splits a UTF-8 character: bytes of an
// unfinished character are held back until the character completes. Invalid bytes are passed
// through (they can never complete). One decoder per generated sequence; it keeps its own
// (shared, cheap) copy of the tokenizer.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, bool render_special = false)
      : tok_(tok), render_special_(render_special) {}

  // Returns the text that became complete with this token (possibly empty).
  std::string push(int32_t id);
  // Returns whatever is still held back (end of stream), possibly an incomplete sequence.
  std::string flush();

 private:
  Tokenizer tok_;
  bool render_special_;
  std::string pending_;
};

}  // namespace nurl
