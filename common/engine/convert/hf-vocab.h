// The vocabulary part of read_tokenizer (hf-tokenizer.h): one reader per tokenizer file kind,
// both producing the same Vocab, which hf-tokenizer.cpp completes (added tokens, padding, special
// ids, flags) and turns into GGUF keys.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/convert/hf-json.h"

namespace nurl::convert {

constexpr int32_t kTypeNormal = 1, kTypeUnknown = 2, kTypeControl = 3, kTypeUserDefined = 4, kTypeUnused = 5;

struct Vocab {
  std::string model;                 // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2"
  std::string pre = "default";       // tokenizer.ggml.pre
  std::vector<std::string> tokens;   // by id; holes are empty and filled by padding
  std::vector<bool> present;         // which ids the tokenizer defines
  std::vector<float> scores;         // SentencePiece only
  std::vector<int32_t> types;
  std::vector<std::string> merges;   // BPE only: "left right"
  std::optional<bool> add_space_prefix;
  int32_t spm_unk = -1, spm_bos = -1, spm_eos = -1, spm_pad = -1;  // the SentencePiece trainer's ids
  Json post_processor;               // tokenizer.json's, for add_bos/add_eos when no flag says

  void set(int64_t id, std::string text, int32_t type, float score);
};

// tokenizer.model (SentencePiece ModelProto).
Result<Vocab> read_spm_vocab(const std::filesystem::path& file);
// tokenizer.json with a byte-level BPE model (vocab, merges, added_tokens, pre-tokenizer).
// clean_spaces: tokenizer_config.json's clean_up_tokenization_spaces (tells apart two families
// that split alike).
Result<Vocab> read_bpe_vocab(const JsonDoc& tokenizer_json, bool clean_spaces);

}  // namespace nurl::convert
