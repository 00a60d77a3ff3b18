// Seed corpus for gguf_fuzz, generated at run time: `gguf_fuzz_seeds <out-dir> <testdata-dir>`.
// Writes small writer-made files (every value type, nested arrays, each tensor type, v2, custom
// alignment, vocab-only), plus for every real GGUF in testdata/{models,vocab}: its first 4 KiB
// and a miniature (same keys and tensor names/types, arrays cut to 4 items, tensors one block).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"

namespace {

namespace fs = std::filesystem;
using namespace nurl;
using gguf::Value;
using gguf::ValueType;

bool save(const fs::path& p, std::span<const uint8_t> b) {
  std::ofstream o(p, std::ios::binary);
  o.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  return bool(o);
}

bool save(const fs::path& p, gguf::Writer& w) {
  auto b = w.write_to_memory();
  if (!b.ok()) {
    std::cerr << p << ": " << b.error().msg << "\n";
    return false;
  }
  return save(p, *b);
}

Value shrink(const Value& v) {
  if (auto s = v.get_if<std::string>()) return Value{Value::Storage(s->substr(0, 64))};
  if (auto a = v.get_if<gguf::Array>()) {
    gguf::Array out{a->elem_type, {}};
    for (size_t i = 0; i < a->items.size() && i < 4; ++i) out.items.push_back(shrink(a->items[i]));
    return Value{Value::Storage(std::move(out))};
  }
  return v;
}

// Miniature of a real file: its structure without its bulk.
bool miniature(const gguf::File& f, const fs::path& out) {
  gguf::Writer w(f.version());
  for (const auto& kv : f.metadata()) w.add(kv.key, shrink(kv.value));
  std::vector<std::vector<uint8_t>> data;
  data.reserve(f.tensors().size());
  for (const auto& t : f.tensors()) {
    const TypeInfo& ti = type_info(t.type);
    std::vector<uint64_t> ne(t.n_dims, 1);
    ne[0] = ti.block_elems;
    auto& d = data.emplace_back(ti.block_bytes);
    for (size_t i = 0; i < d.size(); ++i) d[i] = uint8_t(i * 37 + 11);
    w.add_tensor(t.name, t.type, ne, d);
  }
  return save(out, w);
}

bool writer_made(const fs::path& dir) {
  bool ok = true;
  {
    gguf::Writer w;
    const std::vector<std::string> words = {"", "a", "<0x0A>", "\xe2\x96\x81the"};
    const std::vector<float> scores = {0.0f, -1.5f, -2.0f, 1e30f};
    w.add_string("general.architecture", "llama").add_u32("general.alignment", 32);
    w.add_u8("u8", 1).add_i8("i8", -1).add_u16("u16", 2).add_i16("i16", -2).add_u32("llama.block_count", 2);
    w.add_i32("i32", -3).add_f32("llama.rope.freq_base", 10000.0f).add_bool("b", true).add_u64("u64", 4);
    w.add_i64("i64", -4).add_f64("f64", 0.5).add_string_array("tokenizer.ggml.tokens", words);
    w.add_f32_array("tokenizer.ggml.scores", scores);
    w.add("nested", gguf::make_array(ValueType::array, {gguf::make_array(ValueType::u8, {Value{uint8_t(1)}}),
                                                        gguf::make_array(ValueType::string, {})}));
    ok &= save(dir / "w-every-type.gguf", w);
  }
  // One tensor of each known type, one block each, in one file and one file per type.
  std::vector<std::vector<uint8_t>> data;
  gguf::Writer all;
  for (uint32_t id = 0; id < 64; ++id) {
    auto ti = type_info(id);
    if (!ti) continue;
    auto& d = data.emplace_back(ti->block_bytes * 2);
    for (size_t i = 0; i < d.size(); ++i) d[i] = uint8_t(i ^ id);
    const std::string name = "blk.0." + std::string(ti->name) + ".weight";
    all.add_tensor(name, ti->type, {ti->block_elems, 2}, d);
    gguf::Writer one(id % 2 ? 2 : 3);
    one.add_u32("general.alignment", id % 3 ? 16 : 64);
    one.add_tensor(name, ti->type, {ti->block_elems, 1, 2}, d);
    ok &= save(dir / ("w-type-" + std::string(ti->name) + ".gguf"), one);
  }
  ok &= save(dir / "w-all-types.gguf", all);
  {
    gguf::Writer w(2);
    w.add_string("tokenizer.ggml.model", "gpt2");
    ok &= save(dir / "w-vocab-only-v2.gguf", w);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <out-dir> <testdata-dir>\n";
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path testdata = argv[2];
  fs::create_directories(out);
  bool ok = writer_made(out);
  size_t n_real = 0;
  for (const char* sub : {"models", "vocab"}) {
    if (!fs::exists(testdata / sub)) continue;
    for (const auto& e : fs::directory_iterator(testdata / sub)) {
      if (e.path().extension() != ".gguf") continue;
      auto f = gguf::File::open(e.path().string());
      if (!f.ok()) {
        std::cerr << f.error().msg << "\n";
        ok = false;
        continue;
      }
      const std::string stem = e.path().stem().string();
      ok &= save(out / ("prefix-" + stem), f->bytes().first(std::min<size_t>(f->bytes().size(), 4096)));
      ok &= miniature(*f, out / ("mini-" + stem + ".gguf"));
      ++n_real;
    }
  }
  if (n_real == 0) std::cerr << "gguf seeds: no real GGUF files under " << testdata << " (writer-made seeds only)\n";
  return ok ? 0 : 1;
}
