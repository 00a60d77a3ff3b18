// libFuzzer target for the GGUF reader and writer. Any input must give a File or an Error with a
// message (never a crash, a sanitizer report or a huge allocation). Whatever the reader accepts,
// the writer must reproduce: rewriting it parses back to the same metadata and tensors, and a
// rewritten file is a fixed point (writing it again gives the same bytes).
#include <cstdint>
#include <cstring>
#include <span>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"

namespace {

using nurl::gguf::Array;
using nurl::gguf::File;
using nurl::gguf::Value;

// Bitwise equality (floats compared by bits, so NaN payloads count).
bool same(const Value& a, const Value& b) {
  if (a.type() != b.type()) return false;
  return std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        const T& y = *b.get_if<T>();
        if constexpr (std::is_same_v<T, Array>) {
          if (x.elem_type != y.elem_type || x.items.size() != y.items.size()) return false;
          for (size_t i = 0; i < x.items.size(); ++i)
            if (!same(x.items[i], y.items[i])) return false;
          return true;
        } else if constexpr (std::is_same_v<T, std::string>) {
          return x == y;
        } else {
          return std::memcmp(&x, &y, sizeof(T)) == 0;
        }
      },
      a.v);
}

bool same(const File& a, const File& b) {
  if (a.version() != b.version() || a.alignment() != b.alignment()) return false;
  if (a.metadata().size() != b.metadata().size() || a.tensors().size() != b.tensors().size()) return false;
  for (size_t i = 0; i < a.metadata().size(); ++i)
    if (a.metadata()[i].key != b.metadata()[i].key || !same(a.metadata()[i].value, b.metadata()[i].value)) return false;
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const auto& x = a.tensors()[i];
    const auto& y = b.tensors()[i];
    if (x.name != y.name || x.type != y.type || x.n_dims != y.n_dims || x.ne != y.ne || x.n_bytes != y.n_bytes ||
        std::memcmp(x.data, y.data, x.n_bytes) != 0)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = File::parse(std::span<const uint8_t>(data, size));
  if (!f.ok()) {
    if (f.error().msg.empty()) __builtin_trap();  // every error must say something
    return 0;
  }
  // The accessors and the inspection dump on every key and tensor.
  for (const auto& kv : f->metadata()) {
    (void)f->get_u32(kv.key);
    (void)f->get_i32(kv.key);
    (void)f->get_u64(kv.key);
    (void)f->get_f32(kv.key);
    (void)f->get_bool(kv.key);
    (void)f->get_string(kv.key);
    (void)f->get_array(kv.key);
    (void)kv.value.as_number();
  }
  uint64_t sum = 0;
  for (const auto& t : f->tensors()) {
    if (t.data < data || t.data + t.n_bytes > data + size) __builtin_trap();
    sum += t.data[0] + t.data[t.n_bytes - 1] + t.n_rows();
  }
  if (nurl::gguf::describe(*f).empty() && sum == 0) __builtin_trap();

  auto bytes = nurl::gguf::Writer::from_file(*f).write_to_memory();
  if (!bytes.ok()) __builtin_trap();  // the writer refused what the reader accepted
  auto g = File::parse(*bytes);
  if (!g.ok() || !same(*f, *g)) __builtin_trap();
  auto again = nurl::gguf::Writer::from_file(*g).write_to_memory();
  if (!again.ok() || *again != *bytes) __builtin_trap();
  return 0;
}
