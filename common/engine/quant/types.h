// GGML tensor types as stored in GGUF files: ids, names and block geometry.
// This is the container-level view (how many bytes a row of n elements takes); the numeric
// traits of each format (dequantise, quantise, dot products) live in quant.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nurl {

// Values are the GGUF/ggml type ids; never renumber.
enum class GgmlType : uint32_t {
  F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
  Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
  Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
  IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22,
  IQ4_XS = 23, I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
  TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct TypeInfo {
  GgmlType type;
  std::string_view name;  // as ggml/GGUF tools print it: "f32", "q4_K", ...
  uint32_t block_elems;   // elements per block
  uint32_t block_bytes;   // bytes per block
};

// Geometry of a type id found in a file; nullopt for ids we do not know (the reader reports them).
std::optional<TypeInfo> type_info(uint32_t id);
const TypeInfo& type_info(GgmlType t);  // t must be a known type
std::string_view type_name(GgmlType t);
std::optional<GgmlType> type_from_name(std::string_view name);  // case-insensitive

// Bytes for n elements of type t (n must be a multiple of the block size; callers check).
inline uint64_t row_bytes(const TypeInfo& ti, uint64_t n) { return n / ti.block_elems * ti.block_bytes; }

}  // namespace nurl
