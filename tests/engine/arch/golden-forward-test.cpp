// Forward pass against llama.cpp's goldens for every model in testdata (see golden-check.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/arch/golden-check.h"
#include "testdata.h"

namespace nurl {
namespace {

std::vector<std::string> golden_models() {
  std::vector<std::string> names;
  const std::string dir = test::testdata("golden");
  if (!std::filesystem::exists(dir)) return {"missing-testdata"};
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenForward : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenForward, MatchesLlamaCpp) {
  NURL_REQUIRE_TESTDATA();
  const std::string name = GetParam();
  test::check_golden_forward(test::testdata("models/" + name + ".gguf"), name);
}

INSTANTIATE_TEST_SUITE_P(AllModels, GoldenForward, ::testing::ValuesIn(golden_models()),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace nurl
