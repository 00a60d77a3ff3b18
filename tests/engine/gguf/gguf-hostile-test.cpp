// Hostile input is normal input: hand-made broken files (table-driven), every prefix of a
// writer-made file, truncation points of the real test files and absurd counts in tiny files.
// Each must give an Error whose message names what and where; none may crash or allocate
// what the file cannot hold (the ASan build turns such an allocation into a failure).
#include <gtest/gtest.h>

#include <string>
#include <cstring>
#include <vector>

#include "engine/gguf/gguf-bytes.h"
#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"
#include "testdata.h"

namespace nurl {
namespace {

using test::Bytes;

constexpr uint32_t kU8 = 0, kU32 = 4, kI32 = 5, kBool = 7, kString = 8, kArray = 9;
constexpr uint32_t kF32 = 0, kQ4K = 12;
constexpr uint64_t k2p60 = uint64_t(1) << 60;

struct HostileCase {
  const char* name;
  Bytes (*make)();
  std::vector<std::string> want;  // substrings of the error message
};

void PrintTo(const HostileCase& c, std::ostream* os) { *os << c.name; }

// Header of one tensor "t" (its info starts at offset 24).
Bytes one_tensor() { return Bytes().header(1, 0); }
// Header of one key "k" (key at 24, type at 33, value at 37).
Bytes one_key(uint32_t type) { return Bytes().header(0, 1).key("k", type); }

const HostileCase kCases[] = {
    {"empty", [] { return Bytes(); }, {"unexpected end of file", "magic", "offset 0"}},
    {"wrong_magic", [] { return Bytes().u32(0x4c4d4747).u32(3).u64(0).u64(0); }, {"not a GGUF file", "magic", "offset 0"}},
    {"unprintable_magic", [] { return Bytes().u32(0x47554700).u32(3).u64(0).u64(0); },
     {"magic at offset 0 is \"?GUG\""}},  // found by gguf_fuzz: the shown magic must stay 4 chars
    {"version_1", [] { return Bytes().header(0, 0, 1); }, {"version 1", "not supported"}},
    {"version_unknown", [] { return Bytes().header(0, 0, 7); }, {"unknown GGUF version 7"}},
    {"big_endian", [] { return Bytes().header(0, 0, 0x03000000); }, {"big-endian"}},
    {"truncated_counts", [] { return Bytes().u32(0x46554747).u32(3).u64(0).u32(0); },
     {"unexpected end of file", "metadata count", "offset 16"}},
    {"absurd_kv_count", [] { return Bytes().header(0, k2p60).zeros(40); },
     {"metadata count 1152921504606846976", "offset 16"}},
    {"absurd_tensor_count", [] { return Bytes().header(k2p60, 0).zeros(40); },
     {"tensor count 1152921504606846976", "offset 8"}},
    {"absurd_key_length", [] { return Bytes().header(0, 1).u64(uint64_t(1) << 62).zeros(32); },
     {"key of metadata entry 0", "string length 4611686018427387904", "offset 24"}},
    {"absurd_string_value", [] { return one_key(kString).u64(uint64_t(1) << 62).zeros(16); },
     {"value of 'k'", "string length", "offset 37"}},
    {"absurd_array_length", [] { return one_key(kArray).u32(kU8).u64(k2p60).zeros(20); },
     {"key 'k'", "array length 1152921504606846976", "offset 41"}},
    {"absurd_string_array", [] { return one_key(kArray).u32(kString).u64(k2p60 >> 2).zeros(20); },
     {"key 'k'", "array length", "offset 41"}},
    {"nested_too_deep",
     [] {
       Bytes b = one_key(kArray);
       for (int i = 0; i < 20; ++i) b.u32(kArray).u64(1);
       return b;
     },
     {"key 'k'", "nested too deeply"}},
    {"unknown_value_type", [] { return one_key(13).zeros(8); }, {"key 'k'", "unknown value type 13", "offset 33"}},
    {"unknown_array_type", [] { return one_key(kArray).u32(99).u64(1).zeros(8); },
     {"key 'k'", "unknown array element type 99", "offset 37"}},
    {"bad_bool", [] { return one_key(kBool).u8(2); }, {"key 'k'", "bool value 2", "offset 37"}},
    {"truncated_value", [] { return one_key(kU32).u8(1); }, {"unexpected end of file", "value of 'k'", "offset 37"}},
    {"duplicate_key", [] { return Bytes().header(0, 2).key("k", kU32).u32(1).key("k", kU32).u32(2); },
     {"duplicate metadata key 'k'", "offset 41"}},
    {"alignment_zero", [] { return Bytes().header(0, 1).key("general.alignment", kU32).u32(0); },
     {"general.alignment", "power of two", "0"}},
    {"alignment_three", [] { return Bytes().header(0, 1).key("general.alignment", kU32).u32(3); },
     {"general.alignment", "power of two", "3"}},
    {"alignment_huge", [] { return Bytes().header(0, 1).key("general.alignment", kU32).u32(1u << 21); },
     {"general.alignment", "2097152"}},
    {"alignment_negative", [] { return Bytes().header(0, 1).key("general.alignment", kI32).pod(int32_t(-32)); },
     {"general.alignment", "-32"}},
    {"alignment_string", [] { return Bytes().header(0, 1).key("general.alignment", kString).str("32"); },
     {"general.alignment", "\"32\""}},
    {"absurd_tensor_name", [] { return one_tensor().u64(uint64_t(1) << 62).zeros(40); },
     {"name of tensor 0", "string length", "offset 24"}},
    {"n_dims_zero", [] { return one_tensor().str("t").u32(0).u32(kF32).u64(0).zeros(32); },
     {"tensor 't'", "offset 24", "n_dims 0"}},
    {"n_dims_five", [] { return one_tensor().str("t").u32(5).zeros(64); }, {"tensor 't'", "offset 24", "n_dims 5"}},
    {"zero_dim", [] { return one_tensor().tensor("t", {4, 0}, kF32, 0).zeros(64); },
     {"tensor 't'", "dimension 1 is 0"}},
    {"element_overflow", [] { return one_tensor().tensor("t", {1ull << 32, 1ull << 32}, kF32, 0).zeros(64); },
     {"tensor 't'", "element count overflows"}},
    {"byte_overflow", [] { return one_tensor().tensor("t", {1ull << 31, 1ull << 31}, kF32, 0).zeros(64); },
     {"tensor 't'", "byte size overflows"}},
    {"unknown_tensor_type", [] { return one_tensor().tensor("t", {4}, 99, 0).zeros(64); },
     {"tensor 't'", "offset 24", "unknown tensor type id 99"}},
    {"row_not_whole_blocks", [] { return one_tensor().tensor("t", {16}, kQ4K, 0).zeros(64); },
     {"tensor 't'", "row length 16", "q4_K", "256"}},
    {"duplicate_tensor", [] { return Bytes().header(2, 0).tensor("t", {4}, kF32, 0).tensor("t", {4}, kF32, 32).zeros(96); },
     {"duplicate tensor name 't'", "offset 57"}},
    {"data_past_eof", [] { return one_tensor().tensor("t", {4}, kF32, 0).pad_to(32).zeros(8); },
     {"tensor 't'", "[0, +16)", "leaves the file", "8 bytes"}},
    {"offset_past_eof", [] { return one_tensor().tensor("t", {4}, kF32, uint64_t(1) << 62).pad_to(32).zeros(64); },
     {"tensor 't'", "4611686018427387904", "leaves the file"}},
    {"misaligned_offset", [] { return one_tensor().tensor("t", {4}, kF32, 4).pad_to(32).zeros(64); },
     {"tensor 't'", "offset 4", "not aligned to 32"}},
    {"no_data_section", [] { return one_tensor().tensor("t", {4}, kF32, 0); },
     {"data section", "offset 64", "file ends at 57"}},
};

class GgufHostile : public testing::TestWithParam<HostileCase> {};

TEST_P(GgufHostile, ErrorNamesWhatAndWhere) {
  const Bytes b = GetParam().make();
  auto f = gguf::File::parse(b.b);
  ASSERT_FALSE(f.ok()) << "a broken file was accepted";
  for (const auto& w : GetParam().want) EXPECT_NE(f.error().msg.find(w), std::string::npos) << "want '" << w << "' in: " << f.error().msg;
}

INSTANTIATE_TEST_SUITE_P(All, GgufHostile, testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The positive twins of some cases above, so the table cannot pass by rejecting everything.
TEST(GgufHostile, ValidTwinsParse) {
  EXPECT_TRUE(gguf::File::parse(Bytes().header(0, 0).b).ok());
  EXPECT_TRUE(gguf::File::parse(Bytes().header(0, 0, 2).b).ok());
  EXPECT_TRUE(gguf::File::parse(one_key(kBool).u8(1).b).ok());
  EXPECT_TRUE(gguf::File::parse(Bytes().header(0, 1).key("general.alignment", kU32).u32(64).b).ok());
  Bytes nested = one_key(kArray);
  for (int i = 0; i < 7; ++i) nested.u32(kArray).u64(1);
  nested.u32(kU8).u64(0);
  EXPECT_TRUE(gguf::File::parse(nested.b).ok());
  auto t = gguf::File::parse(one_tensor().tensor("t", {4}, kF32, 0).pad_to(32).zeros(16).b);
  ASSERT_TRUE(t.ok()) << t.error().msg;
  EXPECT_EQ(t->tensor("t")->n_bytes, 16u);
}

// A 64-byte file claiming 2^60 items of each kind fails at once, before allocating for them.
TEST(GgufHostile, TinyFileClaimingHugeCountsFailsFast) {
  const std::vector<Bytes> files = {
      Bytes().header(0, k2p60),
      Bytes().header(k2p60, 0),
      one_key(kArray).u32(kU8).u64(k2p60),
      one_key(kArray).u32(kArray).u64(k2p60),
      one_key(kString).u64(k2p60),
  };
  for (Bytes b : files) {
    b.b.resize(64, 0);
    auto f = gguf::File::parse(b.b);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.error().msg.find("1152921504606846976"), std::string::npos) << f.error().msg;
  }
}

// Bytes of a small file with every value type and three tensors, and where its last tensor ends.
std::vector<uint8_t> small_file(uint64_t* last_end) {
  static const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  static const std::vector<uint8_t> q(34, 7);
  const std::vector<std::string> words = {"a", "", "bc"};
  gguf::Writer w;
  w.add_u8("u8", 1).add_i8("i8", 2).add_u16("u16", 3).add_i16("i16", 4).add_u32("u32", 5).add_i32("i32", 6);
  w.add_f32("f32", 7).add_bool("bool", true).add_string("s", "str").add_u64("u64", 8).add_i64("i64", 9);
  w.add_f64("f64", 10).add_string_array("words", words);
  w.add("nested", gguf::make_array(gguf::ValueType::array, {gguf::make_array(gguf::ValueType::u16, {gguf::Value{uint16_t(1)}})}));
  w.add_tensor("a", GgmlType::F32, {3, 2}, gguf::as_bytes(x));
  w.add_tensor("b", GgmlType::Q8_0, {32}, q);
  w.add_tensor("c", GgmlType::F32, {2}, gguf::as_bytes(std::span<const float>(x).first(2)));
  auto b = w.write_to_memory();
  EXPECT_TRUE(b.ok());
  auto f = gguf::File::parse(*b);
  EXPECT_TRUE(f.ok());
  const auto& c = f->tensors().back();
  *last_end = f->data_offset() + c.offset + c.n_bytes;
  return *b;
}

TEST(GgufHostile, EveryPrefixOfASmallFile) {
  uint64_t last_end = 0;
  const auto full = small_file(&last_end);
  ASSERT_GT(last_end, 200u);
  for (size_t n = 0; n <= full.size(); ++n) {
    auto f = gguf::File::parse(std::span<const uint8_t>(full).first(n));
    if (n >= last_end) {  // only the last tensor's trailing padding is missing: still a whole file
      EXPECT_TRUE(f.ok()) << n << ": " << f.error().msg;
      continue;
    }
    ASSERT_FALSE(f.ok()) << "prefix of " << n << " bytes accepted";
    const std::string& m = f.error().msg;
    EXPECT_TRUE(m.find("offset") != std::string::npos || m.find("tensor '") != std::string::npos)
        << "prefix " << n << ": " << m;
  }
}

TEST(GgufHostile, TruncatedRealFiles) {
  NURL_REQUIRE_TESTDATA();
  for (const char* name : {"models/stories260K.gguf", "models/llama-tok512-Q4_K_M.gguf", "models/phi3-Q4_K_M.gguf",
                           "vocab/ggml-vocab-gpt-2.gguf"}) {
    SCOPED_TRACE(name);
    auto f = gguf::File::open(test::testdata(name));
    ASSERT_TRUE(f.ok()) << f.error().msg;
    const auto bytes = f->bytes();
    std::vector<uint64_t> cuts = {0, 3, 7, 15, 23, 24, 40, f->data_offset() / 2, f->data_offset() - 1};
    if (!f->tensors().empty()) {
      const auto& first = f->tensors().front();
      const auto& last = f->tensors().back();
      cuts.push_back(f->data_offset());
      cuts.push_back(f->data_offset() + first.offset + first.n_bytes / 2);
      cuts.push_back(f->data_offset() + last.offset + last.n_bytes - 1);
    }
    for (uint64_t n : cuts) {
      auto g = gguf::File::parse(bytes.first(n));
      ASSERT_FALSE(g.ok()) << "truncated at " << n << " but accepted";
      const std::string& m = g.error().msg;
      EXPECT_TRUE(m.find("offset") != std::string::npos || m.find("tensor '") != std::string::npos) << n << ": " << m;
    }
    if (!f->tensors().empty()) {
      const auto& last = f->tensors().back();
      auto g = gguf::File::parse(bytes.first(f->data_offset() + last.offset + last.n_bytes - 1));
      ASSERT_FALSE(g.ok());
      EXPECT_NE(g.error().msg.find("tensor '" + last.name + "'"), std::string::npos) << g.error().msg;
    }
  }
}

// A real file whose header claims absurd counts.
TEST(GgufHostile, RealFileWithPatchedCounts) {
  NURL_REQUIRE_TESTDATA();
  auto f = gguf::File::open(test::testdata("models/stories260K.gguf"));
  ASSERT_TRUE(f.ok());
  std::vector<uint8_t> b(f->bytes().begin(), f->bytes().begin() + 4096);
  for (size_t at : {size_t(8), size_t(16)}) {
    auto copy = b;
    const uint64_t huge = ~uint64_t(0);
    std::memcpy(copy.data() + at, &huge, 8);
    auto g = gguf::File::parse(copy);
    ASSERT_FALSE(g.ok());
    EXPECT_NE(g.error().msg.find("offset " + std::to_string(at)), std::string::npos) << g.error().msg;
  }
}

}  // namespace
}  // namespace nurl
