// Independent oracles for store and pull tests: the system's sha256sum and the golden JSON
// written by llama.cpp's tooling (shared/testdata/golden/<model>.json).
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "testdata.h"

namespace nurl::test {

// "sha256:<hex>" as computed by coreutils' sha256sum (not by our code).
inline std::string sha256sum(const std::filesystem::path& p) {
  std::string cmd = "sha256sum '" + p.string() + "'";
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) return "";
  char buf[128] = {};
  size_t n = std::fread(buf, 1, 64, f);
  ::pclose(f);
  return n == 64 ? "sha256:" + std::string(buf, 64) : "";
}

inline nlohmann::json golden_model(const std::string& stem) {
  std::ifstream in(testdata("golden/" + stem + ".json"));
  if (!in) return {};
  return nlohmann::json::parse(in, nullptr, false)["model"];
}

inline std::filesystem::path model_file(const std::string& file) { return testdata("models/" + file); }

// Writes `n` bytes of a deterministic pattern (for big test files that are not in the repo).
inline void write_pattern_file(const std::filesystem::path& p, size_t n, unsigned seed) {
  std::ofstream out(p, std::ios::binary);
  std::string chunk(1 << 16, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t done = 0; done < n;) {
    for (auto& c : chunk) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; c = char(x); }
    size_t k = std::min(chunk.size(), n - done);
    out.write(chunk.data(), std::streamsize(k));
    done += k;
  }
}

}  // namespace nurl::test
