// Seed corpus for tokenizer_fuzz, generated at run time: `tokenizer_fuzz_seeds <out-dir> <testdata>`.
// Every string of golden/tokenizer/qwen2-F16-embQ4_0.json for every tokenizer and both encode
// modes, plus its recorded ids as a decode input (the first byte picks tokenizer and mode, as in
// tokenizer-fuzz.cpp).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

constexpr unsigned kNumTokenizers = 6;  // kFiles in tokenizer-fuzz.cpp

bool save(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream o(p, std::ios::binary);
  o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: tokenizer_fuzz_seeds <out-dir> <testdata-dir>\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::ifstream in(std::string(argv[2]) + "/golden/tokenizer/qwen2-F16-embQ4_0.json");
  if (!in) {
    std::cerr << "tokenizer_fuzz_seeds: cannot read the qwen2 tokenizer golden in " << argv[2] << "\n";
    return 1;
  }
  const auto g = nlohmann::json::parse(in);
  size_t n = 0;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    std::string ids;
    for (int id : c["ids"]) {
      const unsigned v = static_cast<unsigned>(id) + 4096;
      ids += static_cast<char>(v & 0xFF);
      ids += static_cast<char>((v >> 8) & 0xFF);
      ids += static_cast<char>((v >> 16) & 0xFF);
    }
    for (unsigned which = 0; which < kNumTokenizers; ++which) {
      for (unsigned mode = 0; mode < 2; ++mode) {
        const char sel = static_cast<char>(which + kNumTokenizers * mode);
        if (!save(out / ("s" + std::to_string(n++)), sel + text)) return 1;
      }
      if (!save(out / ("s" + std::to_string(n++)), static_cast<char>(which + 2 * kNumTokenizers) + ids))
        return 1;
    }
  }
  std::cout << "tokenizer_fuzz_seeds: " << n << " seeds\n";
  return 0;
}
