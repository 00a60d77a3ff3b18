// SentencePiece's tokenizer.model: a serialised ModelProto (sentencepiece_model.proto), parsed
// here from the protobuf wire format with every length checked. Only the fields a GGUF vocabulary
// needs are kept: the pieces (text, score, type), the trainer's model type and special ids, and
// the normaliser's add_dummy_prefix.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace nurl::convert {

// Piece types; the values are SentencePiece's and GGUF's token types alike.
enum class SpmType : int32_t { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

struct SpmPiece {
  std::string piece;
  float score = 0;
  SpmType type = SpmType::normal;
};

struct SpmModel {
  std::vector<SpmPiece> pieces;
  int32_t model_type = 1;  // TrainerSpec.model_type: 1 unigram, 2 bpe, 3 word, 4 char
  int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  bool byte_fallback = false;
  bool add_dummy_prefix = true;  // NormalizerSpec.add_dummy_prefix
};

// `name` is used in messages. At most 2^24 pieces.
Result<SpmModel> parse_spm_model(std::span<const uint8_t> bytes, const std::string& name);

}  // namespace nurl::convert
