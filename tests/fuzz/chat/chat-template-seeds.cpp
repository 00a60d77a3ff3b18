// Seed corpus for chat_template_fuzz, generated at run time: `chat_template_fuzz_seeds <out-dir>
// <testdata>` writes the source of every reference template in testdata/templates/*.json.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: chat_template_fuzz_seeds <out-dir> <testdata-dir>\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(argv[2]) / "templates")) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path(), std::ios::binary);
    const auto doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded() || !doc.contains("template") || !doc["template"].is_string()) continue;
    const std::string src = doc["template"].get<std::string>();
    std::ofstream o(out / e.path().stem(), std::ios::binary);
    o.write(src.data(), static_cast<std::streamsize>(src.size()));
    if (!o) {
      std::cerr << "cannot write " << (out / e.path().stem()) << "\n";
      return 1;
    }
    ++n;
  }
  std::cout << n << " seed templates\n";
  return n > 0 ? 0 : 1;
}
