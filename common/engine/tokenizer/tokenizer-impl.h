// Internal state shared by the tokenizer's parts (loader, special-token splitter, the three
// models). Not part of the public API. Invariants after from_gguf(): tokens.size() == n_vocab,
// every special id is -1 or in range, special_order holds exactly the ids whose type is control,
// user-defined or unknown (longest text first), pieces[i] is token i's bytes with special
// tokens rendered.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/flat-map.h"
#include "engine/tokenizer/pre-tokenizer.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl::tokenizer_detail {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

struct TokenData {
  std::string text;
  float score = 0.0f;
  TokenType type = TokenType::normal;
  bool lstrip = false;  // when matched as a special token, whitespace before it is dropped
  bool rstrip = false;  // ... and whitespace after it
};

// Byte-level BPE tables. Symbols are "ext ids": vocabulary ids, followed by ids for strings that
// occur in the merge list but not in the vocabulary (llama.cpp merges by text, so such
// intermediate strings can exist).
struct BpeTables {
  std::array<int32_t, 256> byte_symbol{};  // ext id of each byte's mapped character, -1 if none
  std::vector<std::string> ext_text;       // text of ext ids >= n_vocab
  struct Merge {
    int32_t rank;
    int32_t result;  // ext id of the merged text
  };
  U64Map<Merge> merges;  // (left ext id << 32 | right ext id) -> merge
};

}  // namespace nurl::tokenizer_detail

namespace nurl {

struct Tokenizer::Impl {
  TokenizerModel model = TokenizerModel::spm;
  std::string pre = "default";
  std::vector<tokenizer_detail::TokenData> tokens;
  tokenizer_detail::TextIndex token_to_id;  // text -> id (the last id wins for duplicates)

  int32_t bos = -1, eos = -1, eot = -1, eom = -1, unk = -1, sep = -1, pad = -1, mask = -1;
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
  bool add_bos = false, add_eos = false, add_sep = false;
  bool add_space_prefix = false, clean_spaces = false, ignore_merges = false;
  std::vector<int32_t> eog;        // sorted
  std::vector<uint8_t> eog_flag;   // per id

  std::vector<int32_t> special_order;  // ids matched in text before the model runs
  std::vector<std::string> pieces;     // token_to_piece(id, render_special=true)

  // SentencePiece
  std::array<int32_t, 256> byte_token{};  // <0xNN> piece ids (or the 1-char token), -1 if none
  // Code points that some piece has right before a ▁ ("▁▁" in most vocabularies). Before any
  // other ▁ no merge can ever cross, so the encoder cuts the text there into independent words.
  std::vector<char32_t> spm_glue_before_space;  // sorted
  // WordPiece
  size_t max_token_len = 0;
  // BPE
  std::shared_ptr<const tokenizer_detail::PreTokenizer> pre_tokenizer;
  tokenizer_detail::BpeTables bpe;

  int32_t find(std::string_view text) const {
    return token_to_id.find(text, [this](size_t id) -> std::string_view { return tokens[id].text; });
  }
};

namespace tokenizer_detail {

// Model-specific encoders: append the ids for one fragment of ordinary text.
void spm_encode(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out);
void bpe_encode(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out);
void wpm_encode(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out);

// Builds t.bpe from the vocabulary and tokenizer.ggml.merges ("left right" strings).
Result<void> bpe_build(Tokenizer::Impl& t, const std::vector<std::string_view>& merges);

// GPT-2's byte <-> printable-character mapping.
std::string_view bpe_byte_to_text(uint8_t b);                // UTF-8 of the mapped character
bool bpe_text_to_bytes(std::string_view text, std::string& out);  // false if a char is unmapped

}  // namespace tokenizer_detail
}  // namespace nurl
