// Packing of the interleaved layouts (packed-layout.h): each row's blocks are written into their
// group's interleaved places, levels four at a time.
#include "kernels/cpu/packed-layout.h"

#include <cstring>
#include <type_traits>

#include "engine/quant/blocks.h"
#include "kernels/cpu/ref/ref-quants.h"

namespace nurl::packed {

namespace {

// Each writer puts one row's unit (one file block) into its places: row r of a group of R rows,
// unit base p. Levels move four at a time as 32-bit words (byte i of a word = element 4k + i).

constexpr uint32_t kLow = 0x0f0f0f0f;

uint32_t word(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void put_word(uint8_t* p, int R, int k, int r, uint32_t v) {  // chunk/part/word k of row r
  std::memcpy(p + size_t(k) * 4 * R + 4 * size_t(r), &v, 4);
}
void put_f16(uint8_t* p, int r, f16_bits h) {
  std::memcpy(p + 2 * size_t(r), &h, 2);
}

// A nibble part from 8 levels held as low (or, with high, high) nibbles of two words a, b:
// byte i = level of a's byte i | level of b's byte i << 4.
uint32_t part(uint32_t a, uint32_t b, bool high) {
  return high ? ((a >> 4) & kLow) | (b & ~kLow) : (a & kLow) | ((b & kLow) << 4);
}

// The four nibble parts of a q4_0-ordered block (elements 0..15 in the low nibbles of qs, 16..31
// in the high ones).
void put_legacy_nibbles(uint8_t* p, int R, int r, const uint8_t* qs) {
  const uint32_t a = word(qs), b = word(qs + 4), c = word(qs + 8), d = word(qs + 12);
  put_word(p, R, 0, r, part(a, b, false));
  put_word(p, R, 1, r, part(c, d, false));
  put_word(p, R, 2, r, part(a, b, true));
  put_word(p, R, 3, r, part(c, d, true));
}

// Fifth bits of 32 elements from a 32-bit mask (bit e = element e): byte i, bit k = bit 4k + i.
uint32_t fifth_word(uint32_t qh) {
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    uint32_t x = (qh >> i) & 0x11111111;  // bits 4k + i at 4k
    x = (x | x >> 3) & 0x03030303;
    x = (x | x >> 6) & 0x000f000f;
    x = (x | x >> 12) & 0xff;
    out |= x << (8 * i);
  }
  return out;
}

template <class B>
void write_legacy(const B& b, uint8_t* p, int R, int r) {
  put_f16(p, r, b.d);
  uint8_t* lv = p + 2 * size_t(R);
  if constexpr (std::is_same_v<B, BlockQ8_0>) {
    for (int k = 0; k < 8; ++k) put_word(lv, R, k, r, word(reinterpret_cast<const uint8_t*>(b.qs) + 4 * k) ^ 0x80808080u);
    return;
  } else {
    if constexpr (std::is_same_v<B, BlockQ4_1> || std::is_same_v<B, BlockQ5_1>) {
      put_f16(lv, r, b.m);
      lv += 2 * size_t(R);
    }
    put_legacy_nibbles(lv, R, r, b.qs);
    if constexpr (std::is_same_v<B, BlockQ5_0> || std::is_same_v<B, BlockQ5_1>)
      put_word(lv + 16 * size_t(R), R, 0, r, fifth_word(word(b.qh)));
  }
}

// q4_K and q5_K: pair c of 32-element sub-blocks is qs[32c .. 32c + 31], the first sub-block in
// the low nibbles; q5_K's fifth bit of element 32w + l is bit w of qh[l].
template <class B>
void write_k4(const B& b, uint8_t* p, int R, int r) {
  using O = K4Offsets;
  put_f16(p + O::d(R), r, b.d);
  put_f16(p + O::dmin(R), r, b.dmin);
  for (int s = 0; s < 8; ++s) {
    uint8_t sc, mn;
    ref::scale_min_k4(s, b.scales, &sc, &mn);
    p[O::scales(R) + size_t(s) * R + r] = sc;
    p[O::mins(R) + size_t(s / 2) * 2 * R + 2 * r + s % 2] = mn;
  }
  uint8_t* nib = p + O::nibbles(R);
  for (int j = 0; j < 32; ++j) {  // part j: elements 8j .. 8j + 7
    const uint8_t* q = b.qs + 32 * (j / 8) + 8 * (j % 4);
    put_word(nib, R, j, r, part(word(q), word(q + 4), j % 8 >= 4));
  }
  if constexpr (std::is_same_v<B, BlockQ5_K>)
    for (int w = 0; w < 8; ++w) {
      uint32_t mask = 0;
      for (int l = 0; l < 32; ++l) mask |= uint32_t((b.qh[l] >> w) & 1) << l;
      put_word(p + O::fifth(R), R, w, r, fifth_word(mask));
    }
}

// q6_K: element 128h + 32k + l has its low 4 bits in ql[64h + 32(k & 1) + l] (high nibble for
// k ≥ 2) and its high 2 bits at bits 2k of qh[32h + l].
void write_q6k(const BlockQ6_K& b, uint8_t* p, int R, int r) {
  using O = Q6KOffsets;
  put_f16(p + O::d(R), r, b.d);
  for (int s = 0; s < 16; ++s) p[O::scales(R) + size_t(s / 2) * 2 * R + 2 * r + s % 2] = uint8_t(b.scales[s]);
  for (int j = 0; j < 32; ++j) {  // part j: elements 8j .. 8j + 7
    const int h = j / 16, k = (j % 16) / 4, l = 8 * (j % 4);
    const uint8_t* q = b.ql + 64 * h + 32 * (k & 1) + l;
    put_word(p + O::nibbles(R, j), R, 0, r, part(word(q), word(q + 4), k >= 2));
  }
  for (int w = 0; w < 16; ++w) {  // word w: elements 16w .. 16w + 15
    const int h = w / 8, k = (w % 8) / 2;
    const uint8_t* q = b.qh + 32 * h + 16 * (w % 2);
    uint32_t v = 0;
    for (int c = 0; c < 4; ++c) v |= ((word(q + 4 * c) >> (2 * k)) & 0x03030303u) << (2 * c);
    put_word(p + O::high(R, w), R, 0, r, v);
  }
}

void write_unit(GgmlType t, const uint8_t* src, uint8_t* p, int R, int r) {
  switch (t) {
    case GgmlType::Q8_0: return write_legacy(*reinterpret_cast<const BlockQ8_0*>(src), p, R, r);
    case GgmlType::Q4_0: return write_legacy(*reinterpret_cast<const BlockQ4_0*>(src), p, R, r);
    case GgmlType::IQ4_NL: return write_legacy(*reinterpret_cast<const BlockIQ4_NL*>(src), p, R, r);
    case GgmlType::Q4_1: return write_legacy(*reinterpret_cast<const BlockQ4_1*>(src), p, R, r);
    case GgmlType::Q5_0: return write_legacy(*reinterpret_cast<const BlockQ5_0*>(src), p, R, r);
    case GgmlType::Q5_1: return write_legacy(*reinterpret_cast<const BlockQ5_1*>(src), p, R, r);
    case GgmlType::Q4_K: return write_k4(*reinterpret_cast<const BlockQ4_K*>(src), p, R, r);
    case GgmlType::Q5_K: return write_k4(*reinterpret_cast<const BlockQ5_K*>(src), p, R, r);
    case GgmlType::Q6_K: return write_q6k(*reinterpret_cast<const BlockQ6_K*>(src), p, R, r);
    default: return;
  }
}

bool legacy(GgmlType t) {
  switch (t) {
    case GgmlType::Q8_0:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::IQ4_NL:
      return true;
    default:
      return false;
  }
}

// ---- the inverse: a row's file blocks back from its group ---------------------------------

uint32_t get_word(const uint8_t* p, int R, int k, int r) {
  return word(p + size_t(k) * 4 * R + 4 * size_t(r));
}
f16_bits get_f16(const uint8_t* p, int r) {
  f16_bits h;
  std::memcpy(&h, p + 2 * size_t(r), 2);
  return h;
}
// The words a, b of part(a, b, false) = lo and part(a, b, true) = hi.
void unpart(uint32_t lo, uint32_t hi, uint8_t* a, uint8_t* b) {
  const uint32_t wa = (lo & kLow) | ((hi & kLow) << 4), wb = ((lo >> 4) & kLow) | (hi & ~kLow);
  std::memcpy(a, &wa, 4);
  std::memcpy(b, &wb, 4);
}
// The 32-bit mask of fifth_word's input.
uint32_t unfifth(uint32_t v) {
  uint32_t qh = 0;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 8; ++k) qh |= ((v >> (8 * i + k)) & 1u) << (4 * k + i);
  return qh;
}

template <class B>
void read_legacy(B& b, const uint8_t* p, int R, int r) {
  b.d = get_f16(p, r);
  const uint8_t* lv = p + 2 * size_t(R);
  if constexpr (std::is_same_v<B, BlockQ8_0>) {
    for (int k = 0; k < 8; ++k) {
      const uint32_t v = get_word(lv, R, k, r) ^ 0x80808080u;
      std::memcpy(b.qs + 4 * k, &v, 4);
    }
  } else {
    if constexpr (std::is_same_v<B, BlockQ4_1> || std::is_same_v<B, BlockQ5_1>) {
      b.m = get_f16(lv, r);
      lv += 2 * size_t(R);
    }
    unpart(get_word(lv, R, 0, r), get_word(lv, R, 2, r), b.qs, b.qs + 4);
    unpart(get_word(lv, R, 1, r), get_word(lv, R, 3, r), b.qs + 8, b.qs + 12);
    if constexpr (std::is_same_v<B, BlockQ5_0> || std::is_same_v<B, BlockQ5_1>) {
      const uint32_t qh = unfifth(get_word(lv + 16 * size_t(R), R, 0, r));
      std::memcpy(b.qh, &qh, 4);
    }
  }
}

template <class B>
void read_k4(B& b, const uint8_t* p, int R, int r) {
  using O = K4Offsets;
  b.d = get_f16(p + O::d(R), r);
  b.dmin = get_f16(p + O::dmin(R), r);
  std::memset(b.scales, 0, sizeof b.scales);
  for (int s = 0; s < 8; ++s) {  // the inverse of ref::scale_min_k4
    const uint8_t sc = p[O::scales(R) + size_t(s) * R + r], mn = p[O::mins(R) + size_t(s / 2) * 2 * R + 2 * r + s % 2];
    if (s < 4) {
      b.scales[s] |= sc & 63;
      b.scales[s + 4] |= mn & 63;
    } else {
      b.scales[s + 4] = uint8_t((sc & 0xf) | (mn & 0xf) << 4);
      b.scales[s - 4] |= uint8_t((sc >> 4) << 6);
      b.scales[s] |= uint8_t((mn >> 4) << 6);
    }
  }
  const uint8_t* nib = p + O::nibbles(R);
  for (int c = 0; c < 4; ++c)
    for (int x = 0; x < 4; ++x) {
      const int j = 8 * c + x;  // low-nibble part; its high-nibble partner is j + 4
      uint8_t* q = b.qs + 32 * c + 8 * x;
      unpart(get_word(nib, R, j, r), get_word(nib, R, j + 4, r), q, q + 4);
    }
  if constexpr (std::is_same_v<B, BlockQ5_K>) {
    std::memset(b.qh, 0, sizeof b.qh);
    for (int w = 0; w < 8; ++w) {
      const uint32_t mask = unfifth(get_word(p + O::fifth(R), R, w, r));
      for (int l = 0; l < 32; ++l) b.qh[l] |= uint8_t(((mask >> l) & 1) << w);
    }
  }
}

void read_q6k(BlockQ6_K& b, const uint8_t* p, int R, int r) {
  using O = Q6KOffsets;
  b.d = get_f16(p + O::d(R), r);
  for (int s = 0; s < 16; ++s) b.scales[s] = int8_t(p[O::scales(R) + size_t(s / 2) * 2 * R + 2 * r + s % 2]);
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 2; ++k)
      for (int x = 0; x < 4; ++x) {
        const int j = 16 * h + 4 * k + x;  // low-nibble part; its high-nibble partner is j + 8
        uint8_t* q = b.ql + 64 * h + 32 * k + 8 * x;
        unpart(get_word(p + O::nibbles(R, j), R, 0, r), get_word(p + O::nibbles(R, j + 8), R, 0, r), q, q + 4);
      }
  std::memset(b.qh, 0, sizeof b.qh);
  for (int w = 0; w < 16; ++w) {
    const int h = w / 8, k = (w % 8) / 2;
    uint8_t* q = b.qh + 32 * h + 16 * (w % 2);
    const uint32_t v = get_word(p + O::high(R, w), R, 0, r);
    for (int c = 0; c < 4; ++c) {
      const uint32_t bits = ((v >> (2 * c)) & 0x03030303u) << (2 * k);
      uint32_t cur = word(q + 4 * c);
      cur |= bits;
      std::memcpy(q + 4 * c, &cur, 4);
    }
  }
}

void read_unit(GgmlType t, const uint8_t* p, int R, int r, uint8_t* dst) {
  switch (t) {
    case GgmlType::Q8_0: return read_legacy(*reinterpret_cast<BlockQ8_0*>(dst), p, R, r);
    case GgmlType::Q4_0: return read_legacy(*reinterpret_cast<BlockQ4_0*>(dst), p, R, r);
    case GgmlType::IQ4_NL: return read_legacy(*reinterpret_cast<BlockIQ4_NL*>(dst), p, R, r);
    case GgmlType::Q4_1: return read_legacy(*reinterpret_cast<BlockQ4_1*>(dst), p, R, r);
    case GgmlType::Q5_0: return read_legacy(*reinterpret_cast<BlockQ5_0*>(dst), p, R, r);
    case GgmlType::Q5_1: return read_legacy(*reinterpret_cast<BlockQ5_1*>(dst), p, R, r);
    case GgmlType::Q4_K: return read_k4(*reinterpret_cast<BlockQ4_K*>(dst), p, R, r);
    case GgmlType::Q5_K: return read_k4(*reinterpret_cast<BlockQ5_K*>(dst), p, R, r);
    case GgmlType::Q6_K: return read_q6k(*reinterpret_cast<BlockQ6_K*>(dst), p, R, r);
    default: return;
  }
}

// Bytes and elements of one file block.
size_t block_bytes(GgmlType t) {
  switch (t) {
    case GgmlType::Q8_0: return sizeof(BlockQ8_0);
    case GgmlType::Q4_0: return sizeof(BlockQ4_0);
    case GgmlType::Q4_1: return sizeof(BlockQ4_1);
    case GgmlType::Q5_0: return sizeof(BlockQ5_0);
    case GgmlType::Q5_1: return sizeof(BlockQ5_1);
    case GgmlType::IQ4_NL: return sizeof(BlockIQ4_NL);
    case GgmlType::Q4_K: return sizeof(BlockQ4_K);
    case GgmlType::Q5_K: return sizeof(BlockQ5_K);
    case GgmlType::Q6_K: return sizeof(BlockQ6_K);
    default: return 0;
  }
}
int64_t block_elems(GgmlType t) {
  return legacy(t) ? kQK : kQK_K;
}

}  // namespace

bool has_layout(GgmlType t) {
  return legacy(t) || t == GgmlType::Q4_K || t == GgmlType::Q5_K || t == GgmlType::Q6_K;
}

size_t unit_bytes(GgmlType t, int rows) {
  switch (t) {
    case GgmlType::Q4_K: return 148 * size_t(rows);
    case GgmlType::Q5_K: return 180 * size_t(rows);
    case GgmlType::Q6_K: return 210 * size_t(rows);
    default: return block_bytes(t) * size_t(rows);
  }
}

size_t group_bytes(GgmlType t, int rows, int64_t n_cols) {
  return unit_bytes(t, rows) * size_t(n_cols / block_elems(t));
}

void pack(GgmlType t, int rows, const void* W, size_t row_stride, int64_t n_rows, int64_t n_cols, int64_t g_begin,
          int64_t g_end, void* dst) {
  const size_t bb = block_bytes(t);
  const int64_t nb = n_cols / block_elems(t);
  const size_t ub = unit_bytes(t, rows), gb = group_bytes(t, rows, n_cols);
  for (int64_t g = g_begin; g < g_end; ++g) {
    uint8_t* out = static_cast<uint8_t*>(dst) + size_t(g) * gb;
    if ((g + 1) * rows > n_rows) std::memset(out, 0, gb);  // rows past the end stay zero
    for (int r = 0; r < rows; ++r) {
      const int64_t row = g * rows + r;
      if (row >= n_rows) break;
      const uint8_t* src = static_cast<const uint8_t*>(W) + size_t(row) * row_stride;
      for (int64_t b = 0; b < nb; ++b) write_unit(t, src + size_t(b) * bb, out + size_t(b) * ub, rows, r);
    }
  }
}

void unpack_row(GgmlType t, int rows, const void* packed, int64_t n_cols, int64_t row, void* dst) {
  const size_t bb = block_bytes(t), ub = unit_bytes(t, rows);
  const int64_t nb = n_cols / block_elems(t);
  const uint8_t* grp = static_cast<const uint8_t*>(packed) + size_t(row / rows) * group_bytes(t, rows, n_cols);
  for (int64_t b = 0; b < nb; ++b)
    read_unit(t, grp + size_t(b) * ub, rows, int(row % rows), static_cast<uint8_t*>(dst) + size_t(b) * bb);
}

}  // namespace nurl::packed
