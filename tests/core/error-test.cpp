#include "core/error.h"

#include <gtest/gtest.h>

namespace nurl {
namespace {

Result<int> half(int x) {
  if (x % 2) return Error(Code::invalid_argument, "odd: " + std::to_string(x));
  return x / 2;
}

Result<int> quarter(int x) {
  NURL_ASSIGN(int h, half(x));
  NURL_ASSIGN(int q, half(h));
  return q;
}

TEST(Error, PropagatesThroughAssign) {
  EXPECT_EQ(*quarter(8), 2);
  auto r = quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().msg, "odd: 3");
  EXPECT_EQ(http_status(r.error().code), 400);
}

TEST(Error, ContextKeepsCode) {
  Error e(Code::not_found, "no such key");
  auto c = e.context("model.gguf");
  EXPECT_EQ(c.code, Code::not_found);
  EXPECT_EQ(c.msg, "model.gguf: no such key");
}

}  // namespace
}  // namespace nurl
