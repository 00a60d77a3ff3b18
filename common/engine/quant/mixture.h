// Per-tensor type choice when a model is quantised, as llama-quantize makes it: one file type
// (general.file_type, llama.cpp's llama_ftype) names a base type, and a mixture (Q4_K_M, ...)
// bumps the output, attention-v and ffn-down tensors of some layers. Tensors whose row length is
// not a multiple of the chosen type's block fall back to a type whose block fits.
//
// These rules were derived by running llama-quantize on synthetic models (16 layers; GQA 2 and 4;
// tied and untied output; fused qkv; rows of 128 and 256) and are checked against it in
// tests/engine/quant/mixture-test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/quant/types.h"

namespace nurl::quant {

struct FileType {
  std::string_view name;  // as llama-quantize spells it: "Q4_K_M", "F16", ...
  uint32_t ftype;         // general.file_type
  GgmlType base;          // the type most tensors get
};

// Every accepted file type (aliases excluded), in llama-quantize's list order.
std::span<const FileType> file_types();
// Case-insensitive; llama-quantize's aliases too ("Q4_K" is Q4_K_M, "Q5_K" Q5_K_M, "Q3_K" Q3_K_M).
const FileType* find_file_type(std::string_view name);

// What the choice depends on besides the tensor's name and shape.
struct ModelFacts {
  int n_head = 0;
  int n_head_kv = 0;
  bool has_output = true;  // false: token_embd is the output too (tied) and is treated as it
  int n_attn_v = 0;        // tensors named attn_v.weight or attn_qkv.weight
  int n_ffn_down = 0;      // tensors named ffn_down*
};

// Whether llama-quantize quantises this tensor at all (2-D+ weights; norms and 1-D stay).
bool is_quantizable(std::string_view name, uint32_t n_dims);

// Chooses types in file order (the layer counters advance with each attn_v / ffn_down seen).
class TypeChooser {
 public:
  // pure: every quantisable tensor gets the base type (llama-quantize --pure), fallbacks aside.
  TypeChooser(const FileType& ft, bool pure, const ModelFacts& facts);
  // The type for this tensor, or nullopt when it is not quantised (copied as it is).
  std::optional<GgmlType> next(std::string_view name, std::span<const uint64_t> ne);

 private:
  GgmlType mixture_type(std::string_view name, uint64_t ne0);
  const FileType& ft_;
  bool pure_;
  ModelFacts facts_;
  int i_attn_v_ = 0;
  int i_ffn_down_ = 0;
};

// The type a tensor of row length ne0 falls back to when `t` does not fit it (t itself if it fits).
GgmlType fallback_type(GgmlType t, uint64_t ne0);

}  // namespace nurl::quant
