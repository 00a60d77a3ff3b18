// Interleaved weight layouts for the dot-product kernels, made once at load from the file's rows.
//
// R consecutive rows form a group. Within a group the file's blocks follow each other as in a
// row ("units": one 32-element block of the legacy formats, one 256-element super-block of the
// k-quants), and inside a unit the 4-element chunks of the R rows lie side by side: one vector
// load of R × 4 bytes holds the same chunk of every row, so one vpdpbusd against a token's four
// activations (broadcast) advances R dot products, one per 32-bit lane. Scales are gathered the
// same way (R values side by side). A unit of a group takes as many bytes as R blocks of the file
// (the k-quants a few bytes more: their 6-bit scales are stored unpacked), so a packed matrix is
// the size of the file's and generation streams the same number of bytes.
//
// Levels are unsigned bytes (what vpdpbusd's unsigned operand takes): q8_0 stores w + 128; the
// 4-bit formats (and iq4_nl's table indices) store two chunks per byte, nibbles of "part" j:
//   byte (r, i) of part j = level(8j + i) | level(8j + 4 + i) << 4      (r: row, i: 0..3)
// so chunk 2j is part j's low nibbles and chunk 2j + 1 its high nibbles. Fifth bits (q5_0, q5_1,
// q5_K) are one 32-bit word per row and 32 elements: bit k of byte i = fifth bit of element
// 4k + i. q6_K's two high bits: per 16 elements one word per row, bits 2c..2c+1 of byte i = high
// bits of element 4c + i.
//
// Unit layouts (offsets in bytes, R rows; f16 = the file's half floats):
//   q8_0   d f16[R] | levels u8 [8 chunks][R][4]                         34R
//   q4_0   d f16[R] | nibbles [4 parts][R][4]                            18R
//   iq4_nl d f16[R] | nibbles [4][R][4] (table indices)                  18R
//   q5_0   d f16[R] | nibbles [4][R][4] | fifth bits [R][4]              22R
//   q4_1   d f16[R] | m f16[R] | nibbles [4][R][4]                       20R
//   q5_1   d f16[R] | m f16[R] | nibbles [4][R][4] | fifth bits [R][4]   24R
//   q4_K   d f16[R] | dmin f16[R] | scales u8[8][R] | mins u8[4 pairs][R][2] | nibbles [32][R][4]   148R
//   q5_K   q4_K's | fifth bits [8 sub-blocks][R][4]                                              180R
//   q6_K   d f16[R] | scales i8[8 pairs][R][2] | 8 × (nibbles [4][R][4] | high bits [2][R][4])    210R
// (q6_K's levels are in the order the kernel reads them, 32 elements at a time: one stream, which
// the hardware prefetcher follows better than two.)
// Rows past the matrix's end in its last group are zeros (scale 0: they contribute nothing).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/quant/types.h"

namespace nurl::packed {

// Whether weight type t has an interleaved layout.
bool has_layout(GgmlType t);
// Bytes of one unit (one file block of each of `rows` rows) and of one group of a row of n_cols.
size_t unit_bytes(GgmlType t, int rows);
size_t group_bytes(GgmlType t, int rows, int64_t n_cols);
// Packs groups [g_begin, g_end) of W (n_rows rows of row_stride bytes, n_cols elements each) into
// dst, group g at dst + g · group_bytes(t, rows, n_cols).
void pack(GgmlType t, int rows, const void* W, size_t row_stride, int64_t n_rows, int64_t n_cols, int64_t g_begin,
          int64_t g_end, void* dst);

// The inverse: row `row` of the packed matrix back in the file's layout (n_cols elements of type t
// at dst, the file's bytes exactly), for row lookups in a matrix whose file pages were dropped.
void unpack_row(GgmlType t, int rows, const void* packed, int64_t n_cols, int64_t row, void* dst);

// Offsets inside a unit (see above), shared by pack() and the kernels.
struct K4Offsets {
  static constexpr size_t d(int) { return 0; }
  static constexpr size_t dmin(int r) { return 2 * size_t(r); }
  static constexpr size_t scales(int r) { return 4 * size_t(r); }
  static constexpr size_t mins(int r) { return 12 * size_t(r); }
  static constexpr size_t nibbles(int r) { return 20 * size_t(r); }
  static constexpr size_t fifth(int r) { return 148 * size_t(r); }
};
struct Q6KOffsets {
  static constexpr size_t d(int) { return 0; }
  static constexpr size_t scales(int r) { return 2 * size_t(r); }
  // Nibble part j (elements 8j .. 8j + 7) and high-bit word h (elements 16h .. 16h + 15).
  static constexpr size_t nibbles(int r, int j) { return 18 * size_t(r) + size_t(j / 4) * 24 * r + size_t(j % 4) * 4 * r; }
  static constexpr size_t high(int r, int h) { return 18 * size_t(r) + size_t(h / 2) * 24 * r + 16 * size_t(r) + size_t(h % 2) * 4 * r; }
};

}  // namespace nurl::packed
