#include "core/zero-pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace nurl {
namespace {

// Pages of [p, p + n) the kernel holds resident (mincore: the kernel's own answer).
size_t resident_pages(const void* p, size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((n + page - 1) / page);
  if (mincore(const_cast<void*>(p), n, v.data()) != 0) return SIZE_MAX;
  size_t k = 0;
  for (unsigned char c : v) k += c & 1;
  return k;
}

TEST(ZeroPages, ReadsZerosAndHoldsOnlyTouchedPages) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t n = 64 * page / sizeof(float);
  ZeroPages<float> b(n);
  ASSERT_EQ(b.size(), n);
  EXPECT_EQ(resident_pages(b.data(), n * sizeof(float)), 0u);
  b[0] = 1.5f;
  b[n - 1] = 2.5f;
  EXPECT_EQ(resident_pages(b.data(), n * sizeof(float)), 2u);
  EXPECT_EQ(b[0], 1.5f);
  EXPECT_EQ(b[n - 1], 2.5f);
  EXPECT_EQ(b[n / 2], 0.0f);  // a read maps the shared zero page, which mincore may count or not
}

TEST(ZeroPages, MovesOwnership) {
  ZeroPages<uint8_t> a(10000);
  a[9999] = 7;
  uint8_t* p = a.data();
  ZeroPages<uint8_t> b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b[9999], 7);
  ZeroPages<uint8_t> c(100);
  c = std::move(b);
  EXPECT_EQ(c.size(), 10000u);
  EXPECT_EQ(c[9999], 7);
  ZeroPages<uint8_t> none(0);
  EXPECT_EQ(none.data(), nullptr);
  EXPECT_EQ(none.begin(), none.end());
}

}  // namespace
}  // namespace nurl
