// Open-addressing hash tables for the tokenizer's hot lookups (text -> id, merge pair -> rank).
// Linear probing over a power-of-two slot array kept at most half full; no erase. Compared with
// std::unordered_map they avoid one allocation per entry and one pointer chase per lookup, which
// is most of the cost of encoding with a 150k-262k entry vocabulary.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace nurl::tokenizer_detail {

inline size_t table_size_for(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  return cap;
}

// text -> id, where the texts are owned elsewhere and reached through `text_of(id)`.
class TextIndex {
 public:
  // Inserts or replaces (the later id wins for equal texts).
  template <typename TextOf>
  void build(size_t n, TextOf text_of) {
    slots_.assign(table_size_for(n), Slot{0, -1});
    mask_ = slots_.size() - 1;
    for (size_t id = 0; id < n; ++id) {
      const std::string_view s = text_of(id);
      const uint64_t h = hash(s);
      for (size_t i = h & mask_;; i = (i + 1) & mask_) {
        Slot& slot = slots_[i];
        if (slot.id < 0) {
          slot = {static_cast<uint32_t>(h >> 32), static_cast<int32_t>(id)};
          break;
        }
        if (slot.tag == static_cast<uint32_t>(h >> 32) && text_of(static_cast<size_t>(slot.id)) == s) {
          slot.id = static_cast<int32_t>(id);
          break;
        }
      }
    }
  }

  template <typename TextOf>
  int32_t find(std::string_view s, TextOf text_of) const {
    if (slots_.empty()) return -1;
    const uint64_t h = hash(s);
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.id < 0) return -1;
      if (slot.tag == tag && text_of(static_cast<size_t>(slot.id)) == s) return slot.id;
    }
  }

  static uint64_t hash(std::string_view s) { return std::hash<std::string_view>{}(s); }

 private:
  struct Slot {
    uint32_t tag;  // high hash bits, to skip most text comparisons
    int32_t id;    // -1: empty
  };
  std::vector<Slot> slots_;
  size_t mask_ = 0;
};

// uint64 key -> small value; the key ~0 is reserved for empty slots.
template <typename V>
class U64Map {
 public:
  void reserve(size_t n) {
    slots_.assign(table_size_for(n), Slot{kEmpty, V{}});
    mask_ = slots_.size() - 1;
  }
  // Keeps the first value for a key (returns false when the key was present).
  bool emplace(uint64_t key, V v) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == kEmpty) {
        s = {key, v};
        ++size_;
        return true;
      }
      if (s.key == key) return false;
    }
  }
  const V* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key;
    V value;
  };
  static uint64_t mix(uint64_t x) {  // splitmix64 finaliser
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    reserve(old.empty() ? 8 : old.size());
    size_ = 0;
    for (const Slot& s : old)
      if (s.key != kEmpty) emplace(s.key, s.value);
  }
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace nurl::tokenizer_detail
