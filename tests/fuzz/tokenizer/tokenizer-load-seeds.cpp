// Seed corpus for tokenizer_load_fuzz: `tokenizer_load_fuzz_seeds <out-dir> <testdata-dir>`.
// For every vocab/*.gguf and the small models: a miniature with the same tokenizer keys, every
// array cut to its first 300 entries (tokens, scores, types, merges), tensors dropped.
#include <filesystem>
#include <iostream>
#include <fstream>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"

namespace fs = std::filesystem;
using namespace nurl;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: tokenizer_load_fuzz_seeds <out-dir> <testdata-dir>\n";
    return 2;
  }
  const fs::path out = argv[1];
  const std::string td = argv[2];
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(td + "/vocab"))
    if (e.path().extension() == ".gguf") files.push_back(e.path());
  for (const char* m : {"models/stories260K.gguf", "models/phi3-F16-embQ4_K.gguf"}) files.push_back(td + "/" + m);
  size_t n = 0;
  for (const auto& p : files) {
    auto f = gguf::File::open(p.string());
    if (!f.ok()) {
      std::cerr << p << ": " << f.error().msg << "\n";
      return 1;
    }
    gguf::Writer w;
    for (const auto& kv : f->metadata()) {
      if (kv.key == "tokenizer.chat_template") continue;
      gguf::Value v = kv.value;
      if (auto* a = std::get_if<gguf::Array>(&v.v); a && a->items.size() > 300) a->items.resize(300);
      w.add(kv.key, std::move(v));
    }
    auto bytes = w.write_to_memory();
    if (!bytes.ok()) {
      std::cerr << p << ": " << bytes.error().msg << "\n";
      return 1;
    }
    std::ofstream o(out / ("v" + std::to_string(n++) + ".gguf"), std::ios::binary);
    o.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
  }
  std::cout << "tokenizer_load_fuzz_seeds: " << n << " seeds\n";
  return 0;
}
