// Test helper: a little-endian byte assembler for hand-made GGUF files, independent of the
// writer, so tests can build exactly the (often broken) bytes they need.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace nurl::test {

struct Bytes {
  std::vector<uint8_t> b;

  template <typename T>
  Bytes& pod(T x) {
    uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &x, sizeof(T));
    b.insert(b.end(), tmp, tmp + sizeof(T));
    return *this;
  }
  Bytes& u8(uint8_t x) { return pod(x); }
  Bytes& u32(uint32_t x) { return pod(x); }
  Bytes& u64(uint64_t x) { return pod(x); }
  Bytes& str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& zeros(size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
  Bytes& pad_to(size_t align) { return zeros((align - b.size() % align) % align); }
  // GGUF header: magic, version, tensor count, metadata count.
  Bytes& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return u32(0x46554747).u32(version).u64(n_tensors).u64(n_kv);
  }
  // A key with its type id; the caller appends the value.
  Bytes& key(std::string_view k, uint32_t type) { return str(k).u32(type); }
  // A tensor info: name, dims, type id, offset.
  Bytes& tensor(std::string_view name, std::initializer_list<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(uint32_t(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  size_t size() const { return b.size(); }
};

}  // namespace nurl::test
