// Protobuf wire-format reading of a SentencePiece ModelProto (see spm-model.h). Field numbers
// from sentencepiece_model.proto: ModelProto {pieces = 1, trainer_spec = 2, normalizer_spec = 3},
// SentencePiece {piece = 1, score = 2, type = 3}, TrainerSpec {model_type = 3, byte_fallback = 35,
// unk_id = 40, bos_id = 41, eos_id = 42, pad_id = 43}, NormalizerSpec {add_dummy_prefix = 3}.
#include "engine/convert/spm-model.h"

#include <cstring>

namespace nurl::convert {

namespace {

constexpr size_t kMaxPieces = size_t(1) << 24;

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// A bounded reader over one message's bytes.
class Reader {
 public:
  Reader(std::span<const uint8_t> b, const std::string& where, uint64_t base) : b_(b), where_(where), base_(base) {}
  bool done() const { return pos_ >= b_.size(); }

  Result<uint64_t> varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= b_.size()) return bad("truncated varint");
      const uint8_t c = b_[pos_++];
      v |= uint64_t(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    return bad("varint longer than 10 bytes");
  }
  // Field number and wire type of the next field.
  Result<std::pair<uint32_t, uint32_t>> key() {
    NURL_ASSIGN(uint64_t k, varint());
    if ((k >> 3) == 0 || (k >> 3) > 0x1fffffff) return bad("field number " + std::to_string(k >> 3));
    return std::pair{uint32_t(k >> 3), uint32_t(k & 7)};
  }
  Result<std::span<const uint8_t>> bytes() {
    NURL_ASSIGN(uint64_t n, varint());
    if (n > b_.size() - pos_) return bad("a length of " + std::to_string(n) + " reaches past the end");
    auto s = b_.subspan(pos_, size_t(n));
    pos_ += size_t(n);
    return s;
  }
  Result<uint32_t> fixed32() {
    if (b_.size() - pos_ < 4) return bad("truncated fixed32");
    uint32_t v;
    std::memcpy(&v, b_.data() + pos_, 4);
    pos_ += 4;
    return v;
  }
  Result<void> skip(uint32_t wire) {
    switch (wire) {
      case kVarint: return varint().ok() ? Result<void>() : bad("truncated varint");
      case kFixed64:
        if (b_.size() - pos_ < 8) return bad("truncated fixed64");
        pos_ += 8;
        return {};
      case kLen: {
        auto r = bytes();
        if (!r.ok()) return r.error();
        return {};
      }
      case kFixed32: {
        auto r = fixed32();
        if (!r.ok()) return r.error();
        return {};
      }
      default: return bad("unknown wire type " + std::to_string(wire));
    }
  }
  uint64_t offset() const { return base_ + pos_; }
  uint64_t offset_of(std::span<const uint8_t> inner) const { return base_ + uint64_t(inner.data() - b_.data()); }
  Error bad(const std::string& what) const {
    return Error(Code::corrupt, where_ + ": not a SentencePiece model: " + what + " at offset " + std::to_string(base_ + pos_));
  }

 private:
  std::span<const uint8_t> b_;
  const std::string& where_;
  uint64_t base_;
  size_t pos_ = 0;
};

int32_t as_int32(uint64_t v) { return int32_t(uint32_t(v)); }  // protobuf int32: two's complement

Result<SpmPiece> parse_piece(std::span<const uint8_t> b, const std::string& where, uint64_t base) {
  Reader r(b, where, base);
  SpmPiece p;
  while (!r.done()) {
    NURL_ASSIGN(auto k, r.key());
    if (k.first == 1 && k.second == kLen) {
      NURL_ASSIGN(auto s, r.bytes());
      p.piece.assign(reinterpret_cast<const char*>(s.data()), s.size());
    } else if (k.first == 2 && k.second == kFixed32) {
      NURL_ASSIGN(uint32_t bits, r.fixed32());
      std::memcpy(&p.score, &bits, 4);
    } else if (k.first == 3 && k.second == kVarint) {
      NURL_ASSIGN(uint64_t t, r.varint());
      if (t < 1 || t > 6) return r.bad("piece type " + std::to_string(t));
      p.type = SpmType(t);
    } else {
      NURL_TRY(r.skip(k.second));
    }
  }
  return p;
}

}  // namespace

Result<SpmModel> parse_spm_model(std::span<const uint8_t> bytes, const std::string& name) {
  SpmModel m;
  Reader top(bytes, name, 0);
  while (!top.done()) {
    NURL_ASSIGN(auto k, top.key());
    if (k.second != kLen) {
      NURL_TRY(top.skip(k.second));
      continue;
    }
    NURL_ASSIGN(auto body, top.bytes());
    const uint64_t base = top.offset_of(body);
    if (k.first == 1) {
      if (m.pieces.size() >= kMaxPieces) return top.bad("more than 2^24 pieces");
      NURL_ASSIGN(SpmPiece p, parse_piece(body, name, base));
      m.pieces.push_back(std::move(p));
    } else if (k.first == 2 || k.first == 3) {
      Reader r(body, name, base);
      while (!r.done()) {
        NURL_ASSIGN(auto f, r.key());
        if (f.second != kVarint) {
          NURL_TRY(r.skip(f.second));
          continue;
        }
        NURL_ASSIGN(uint64_t v, r.varint());
        if (k.first == 2) {
          switch (f.first) {
            case 3: m.model_type = as_int32(v); break;
            case 35: m.byte_fallback = v != 0; break;
            case 40: m.unk_id = as_int32(v); break;
            case 41: m.bos_id = as_int32(v); break;
            case 42: m.eos_id = as_int32(v); break;
            case 43: m.pad_id = as_int32(v); break;
            default: break;
          }
        } else if (f.first == 3) {
          m.add_dummy_prefix = v != 0;
        }
      }
    } else {
      // other messages (self-test data, denormalizer) are not needed
    }
  }
  if (m.pieces.empty()) return Error(Code::corrupt, name + ": not a SentencePiece model: it has no pieces");
  return m;
}

}  // namespace nurl::convert
