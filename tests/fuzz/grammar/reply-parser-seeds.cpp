// Seed corpus for reply_parser_fuzz: one documented output per format row (the first byte picks
// the row, the second the reasoning options), written at run time.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "engine/chat/reply-format.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: reply_parser_fuzz_seeds <out-dir> [testdata-dir]\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const auto rows = nurl::chat::tool_formats();
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto& f = rows[r];
    std::string s;
    s += static_cast<char>(r);
    s += static_cast<char>(r % 2 ? 3 : 0);
    s += "<think>hm</think>text ";
    s += f.block_open;
    s += f.call_open;
    s += f.syntax == nurl::chat::CallSyntax::json_object || f.syntax == nurl::chat::CallSyntax::json_array
             ? std::string(R"([{"name":"f","arguments":{"a":"x"}}])")
             : std::string("f") + std::string(f.name_end) + std::string(f.key_open) + "a" + std::string(f.key_close) +
                   std::string(f.value_open) + "x" + std::string(f.value_close) +
                   (f.syntax == nurl::chat::CallSyntax::xml_nested ? "a" + std::string(f.key_close) : std::string()) +
                   R"({"a":"x"})";
    s += f.call_close;
    s += f.block_close;
    s += " tail";
    std::ofstream o(out / ("row-" + std::to_string(r)), std::ios::binary);
    o << s;
  }
  std::cout << rows.size() << " seeds\n";
  return 0;
}
