// gguf::Writer: byte layout against a file assembled by hand from the GGUF spec, every value
#include <unistd.h>
// type through the reader, chunked streaming, alignment, declaration/streaming errors, files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/gguf/gguf-bytes.h"
#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"

namespace nurl {
namespace {

using gguf::Value;
using gguf::ValueType;

using test::Bytes;  // little-endian byte assembler, independent of the writer

TEST(GgufWriter, LayoutMatchesSpecByteForByte) {
  // magic, version 3, 1 tensor, 2 kv; kv "a" u32 7, kv "s" string "hi"; tensor "t" f32 [3] at 0;
  // pad to 32; 12 data bytes; pad to 32.
  const float data[3] = {1.0f, -2.0f, 0.5f};
  Bytes want;
  want.pod(uint32_t(0x46554747)).pod(uint32_t(3)).pod(uint64_t(1)).pod(uint64_t(2));
  want.str("a").pod(uint32_t(4)).pod(uint32_t(7));
  want.str("s").pod(uint32_t(8)).str("hi");
  want.str("t").pod(uint32_t(1)).pod(uint64_t(3)).pod(uint32_t(0)).pod(uint64_t(0));
  want.zeros(32 - want.b.size() % 32);
  for (float f : data) want.pod(f);
  want.zeros(32 - 12);

  gguf::Writer w;
  w.add_u32("a", 7).add_string("s", "hi");
  w.add_tensor("t", GgmlType::F32, {3}, gguf::as_bytes(std::span<const float>(data)));
  auto got = w.write_to_memory();
  ASSERT_TRUE(got.ok()) << got.error().msg;
  EXPECT_EQ(*got, want.b);
}

TEST(GgufWriter, NoTensorsMeansNoPadding) {
  Bytes want;
  want.pod(uint32_t(0x46554747)).pod(uint32_t(2)).pod(uint64_t(0)).pod(uint64_t(1));
  want.str("k").pod(uint32_t(7)).pod(uint8_t(1));
  gguf::Writer w(2);
  w.add_bool("k", true);
  auto got = w.write_to_memory();
  ASSERT_TRUE(got.ok()) << got.error().msg;
  EXPECT_EQ(*got, want.b);
}

// A file with every metadata type and a few tensor types, built by the writer.
struct Sample {
  std::vector<float> f32 = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<uint8_t> q8;  // 2 rows of one q8_0 block
  std::vector<uint8_t> f16 = std::vector<uint8_t>(2 * 5 * 2, 0x3c);
  gguf::Writer w;

  Sample() {
    q8.resize(2 * 34);
    for (size_t i = 0; i < q8.size(); ++i) q8[i] = uint8_t(i * 7);
    const std::vector<std::string> words = {"", "a", "b\nc", std::string("\0x", 2)};
    const std::vector<uint32_t> u32s = {1, 2, 0xffffffffu};
    w.add_u8("t.u8", 250).add_i8("t.i8", -5).add_u16("t.u16", 65000).add_i16("t.i16", -32000);
    w.add_u32("t.u32", 4000000000u).add_i32("t.i32", -2000000000).add_f32("t.f32", 0.25f);
    w.add_bool("t.bool", false).add_string("t.string", "héllo").add_u64("t.u64", ~uint64_t(0));
    w.add_i64("t.i64", std::numeric_limits<int64_t>::min()).add_f64("t.f64", -1e300);
    w.add_string_array("t.strings", words).add_u32_array("t.u32s", u32s);
    w.add("t.empty", gguf::make_array(ValueType::f32, {}));
    w.add("t.nested", gguf::make_array(ValueType::array,
                                       {gguf::make_array(ValueType::i16, {Value{int16_t(-1)}, Value{int16_t(2)}}),
                                        gguf::make_array(ValueType::string, {Value{std::string("x")}}),
                                        gguf::make_array(ValueType::array, {gguf::make_array(ValueType::u8, {})})}));
    w.add_tensor("a.f32", GgmlType::F32, {4, 2}, gguf::as_bytes(f32));
    w.add_tensor("b.q8", GgmlType::Q8_0, {32, 1, 2}, q8);
    w.add_tensor("c.f16", GgmlType::F16, {5, 1, 1, 2}, f16);
  }
};

TEST(GgufWriter, EveryValueTypeReadsBack) {
  Sample s;
  auto bytes = s.w.write_to_memory();
  ASSERT_TRUE(bytes.ok()) << bytes.error().msg;
  auto f = gguf::File::parse(*bytes);
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->version(), 3u);
  ASSERT_EQ(f->metadata().size(), s.w.metadata().size());
  for (size_t i = 0; i < f->metadata().size(); ++i) {
    const auto& got = f->metadata()[i];
    const auto& want = s.w.metadata()[i];
    EXPECT_EQ(got.key, want.key);
    EXPECT_EQ(got.value.type(), want.value.type()) << got.key;
    EXPECT_EQ(got.value.to_string(100), want.value.to_string(100)) << got.key;
  }
  EXPECT_EQ(*f->get_u32("t.u32"), 4000000000u);
  EXPECT_EQ(*f->get_i32("t.i32"), -2000000000);
  EXPECT_EQ(*f->get_u64("t.u64"), ~uint64_t(0));
  EXPECT_EQ(f->find("t.i64")->get_if<int64_t>() ? *f->find("t.i64")->get_if<int64_t>() : 0,
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(*f->get_string("t.string"), "héllo");
  auto strings = f->get_array("t.strings");
  ASSERT_TRUE(strings.ok());
  ASSERT_EQ((*strings)->items.size(), 4u);
  EXPECT_EQ(*(*strings)->items[3].get_if<std::string>(), std::string("\0x", 2));
  auto nested = f->get_array("t.nested");
  ASSERT_TRUE(nested.ok());
  ASSERT_EQ((*nested)->elem_type, ValueType::array);
  EXPECT_EQ(*(*nested)->items[0].get_if<gguf::Array>()->items[0].get_if<int16_t>(), -1);
  EXPECT_EQ((*nested)->items[2].get_if<gguf::Array>()->items[0].get_if<gguf::Array>()->elem_type, ValueType::u8);

  ASSERT_EQ(f->tensors().size(), 3u);
  const auto* a = f->tensor("a.f32");
  const auto* b = f->tensor("b.q8");
  const auto* c = f->tensor("c.f16");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->offset, 0u);
  EXPECT_EQ(b->offset, 32u);        // 32 bytes of f32 already aligned
  EXPECT_EQ(c->offset, 32u + 96u);  // 68 bytes of q8_0 padded to 96
  EXPECT_EQ(c->n_dims, 4u);
  EXPECT_EQ(c->ne[3], 2u);
  EXPECT_EQ(std::vector<uint8_t>(b->bytes().begin(), b->bytes().end()), s.q8);
  EXPECT_EQ(0, std::memcmp(a->data, s.f32.data(), 32));
  EXPECT_EQ(f->data_offset() % 32, 0u);
  EXPECT_EQ(bytes->size(), f->data_offset() + 32 + 96 + 32);
  auto size = s.w.file_size();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, bytes->size());
}

TEST(GgufWriter, ChunkedStreamingEqualsOneShot) {
  Sample one;
  auto whole = one.w.write_to_memory();
  ASSERT_TRUE(whole.ok()) << whole.error().msg;
  // All tensor bytes concatenated, streamed in chunks that cross tensor boundaries.
  Sample s;
  std::vector<uint8_t> all;
  for (const auto& t : s.w.tensors()) all.insert(all.end(), t.data, t.data + t.n_bytes);
  for (size_t chunk : {size_t(1), size_t(7), size_t(33), all.size()}) {
    Sample fresh;
    std::vector<uint8_t> out;
    ASSERT_TRUE(fresh.w.begin(out).ok());
    for (size_t at = 0; at < all.size(); at += chunk) {
      auto r = fresh.w.write(std::span<const uint8_t>(all).subspan(at, std::min(chunk, all.size() - at)));
      ASSERT_TRUE(r.ok()) << r.error().msg;
    }
    auto r = fresh.w.finish();
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(out, *whole) << "chunk " << chunk;
  }
}

TEST(GgufWriter, AlignmentKeyIsHonoured) {
  std::vector<uint8_t> d(3, 1);
  gguf::Writer w;
  w.add_u32("general.alignment", 64);
  w.add_tensor("x", GgmlType::I8, {3}, d).add_tensor("y", GgmlType::I8, {3}, d);
  auto bytes = w.write_to_memory();
  ASSERT_TRUE(bytes.ok()) << bytes.error().msg;
  auto f = gguf::File::parse(*bytes);
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_EQ(f->tensor("y")->offset, 64u);
  EXPECT_EQ(bytes->size(), f->data_offset() + 128);
}

struct DeclCase {
  const char* name;
  void (*declare)(gguf::Writer&);
  const char* want;  // substring of the error
};

void PrintTo(const DeclCase& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<uint8_t> kFour(4, 0);

const DeclCase kDeclCases[] = {
    {"duplicate_key", [](gguf::Writer& w) { w.add_u32("k", 1).add_u32("k", 2); }, "duplicate metadata key 'k'"},
    {"duplicate_tensor",
     [](gguf::Writer& w) { w.add_tensor("t", GgmlType::F32, {1}).add_tensor("t", GgmlType::F32, {1}); },
     "tensor 't': duplicate"},
    {"zero_dims", [](gguf::Writer& w) { w.add_tensor("t", GgmlType::F32, std::span<const uint64_t>()); },
     "tensor 't': 0 dimensions"},
    {"five_dims",
     [](gguf::Writer& w) {
       w.add_tensor("t", GgmlType::F32, {1, 1, 1, 1, 1});
     },
     "5 dimensions"},
    {"zero_dim",
     [](gguf::Writer& w) {
       w.add_tensor("t", GgmlType::F32, {4, 0});
     },
     "dimension 1 = 0"},
    {"overflow",
     [](gguf::Writer& w) {
       w.add_tensor("t", GgmlType::F32, {1ull << 40, 1ull << 40});
     },
     "overflows"},
    {"block_size", [](gguf::Writer& w) { w.add_tensor("t", GgmlType::Q4_K, {128}); }, "block size 256"},
    {"data_size", [](gguf::Writer& w) { w.add_tensor("t", GgmlType::F32, {2}, kFour); }, "needs 8"},
    {"mixed_array",
     [](gguf::Writer& w) {
       w.add("arr", gguf::make_array(ValueType::u32, {Value{uint32_t(1)}, Value{1.0f}}));
     },
     "key 'arr': array item 1 is f32"},
    {"alignment_not_pow2", [](gguf::Writer& w) { w.add_u32("general.alignment", 24); }, "general.alignment"},
    {"alignment_zero", [](gguf::Writer& w) { w.add_u32("general.alignment", 0); }, "general.alignment"},
    {"alignment_string", [](gguf::Writer& w) { w.add_string("general.alignment", "32"); }, "general.alignment"},
    {"no_data", [](gguf::Writer& w) { w.add_tensor("t", GgmlType::F32, {1}); }, "tensor 't': no data attached"},
};

class GgufWriterDecl : public testing::TestWithParam<DeclCase> {};

TEST_P(GgufWriterDecl, ErrorNamesTheCulprit) {
  gguf::Writer w;
  GetParam().declare(w);
  auto r = w.write_to_memory();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find(GetParam().want), std::string::npos) << r.error().msg;
}

INSTANTIATE_TEST_SUITE_P(All, GgufWriterDecl, testing::ValuesIn(kDeclCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(GgufWriter, StreamingErrors) {
  const std::vector<uint8_t> eight(8, 0);
  {
    gguf::Writer w;
    w.add_tensor("t", GgmlType::F32, {1});
    std::vector<uint8_t> out;
    ASSERT_TRUE(w.begin(out).ok());
    auto r = w.write(eight);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().msg.find("beyond the declared tensors"), std::string::npos) << r.error().msg;
  }
  {
    gguf::Writer w;
    w.add_tensor("t", GgmlType::F32, {4});
    std::vector<uint8_t> out;
    ASSERT_TRUE(w.begin(out).ok());
    ASSERT_TRUE(w.write(std::span<const uint8_t>(eight).first(6)).ok());
    auto r = w.finish();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().msg.find("tensor 't': got 6 of 16 bytes"), std::string::npos) << r.error().msg;
  }
  {
    gguf::Writer w;
    std::vector<uint8_t> out;
    ASSERT_TRUE(w.begin(out).ok());
    w.add_u32("late", 1);  // too late: recorded as an error, never written
    EXPECT_FALSE(w.begin(out).ok());
    ASSERT_TRUE(w.finish().ok());
    auto f = gguf::File::parse(out);
    ASSERT_TRUE(f.ok()) << f.error().msg;
    EXPECT_TRUE(f->metadata().empty());
  }
}

TEST(GgufWriter, FileAppearsOnlyWhenFinished) {
  const auto dir = std::filesystem::temp_directory_path() / ("nurl-gguf-writer-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "m.gguf").string();
  std::vector<float> x = {1, 2, 3, 4};
  {
    gguf::Writer w;
    w.add_string("general.architecture", "llama").add_tensor("x", GgmlType::F32, {4}, gguf::as_bytes(x));
    ASSERT_TRUE(w.begin(path).ok());
    EXPECT_TRUE(std::filesystem::exists(path + ".partial"));
    EXPECT_FALSE(std::filesystem::exists(path));
    ASSERT_TRUE(w.write(gguf::as_bytes(x)).ok());
  }  // abandoned: nothing stays behind
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  EXPECT_FALSE(std::filesystem::exists(path));

  gguf::Writer w;
  w.add_string("general.architecture", "llama").add_tensor("x", GgmlType::F32, {4}, gguf::as_bytes(x));
  auto mem = gguf::Writer::from_file(*gguf::File::parse(*w.write_to_memory())).write_to_memory();
  ASSERT_TRUE(mem.ok());
  gguf::Writer w2;
  w2.add_string("general.architecture", "llama").add_tensor("x", GgmlType::F32, {4}, gguf::as_bytes(x));
  ASSERT_TRUE(w2.write_to_file(path).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(disk, *mem);

  // copy_file reproduces a file, set() changes a value in place.
  auto f = gguf::File::open(path);
  ASSERT_TRUE(f.ok()) << f.error().msg;
  const std::string copy = (dir / "copy.gguf").string();
  ASSERT_TRUE(gguf::copy_file(*f, copy).ok());
  auto g = gguf::File::open(copy);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(std::vector<uint8_t>(g->bytes().begin(), g->bytes().end()), disk);
  auto edited = gguf::Writer::from_file(*f).set("general.architecture", Value{std::string("qwen3")}).write_to_memory();
  ASSERT_TRUE(edited.ok());
  auto e = gguf::File::parse(*edited);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(*e->get_string("general.architecture"), "qwen3");
  EXPECT_EQ(e->metadata().size(), 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nurl
