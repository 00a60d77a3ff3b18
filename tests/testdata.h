// Where the golden test data lives, and a loud failure when it is absent.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace nurl::test {

inline std::string testdata_dir() {
  if (const char* e = std::getenv("NURL_TESTDATA"); e && *e) return e;
  return NURL_TESTDATA;
}

inline std::string testdata(const std::string& rel) { return testdata_dir() + "/" + rel; }

// Golden tests call this first: missing data is a failure, never a silent skip.
#define NURL_REQUIRE_TESTDATA()                                                                  \
  do {                                                                                           \
    if (!std::filesystem::exists(::nurl::test::testdata("README.md")))                           \
      FAIL() << "golden test data not found at " << ::nurl::test::testdata_dir()                 \
             << " (set NURL_TESTDATA or -DNURLLAMA_TESTDATA to the shared/testdata folder)";     \
  } while (0)

}  // namespace nurl::test
