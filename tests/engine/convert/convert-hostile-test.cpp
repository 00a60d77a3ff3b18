// Hostile input: safetensors headers that lie (length past the file, overlapping ranges, dtype and
// shape that disagree with the bytes, absurd dimensions, ranges past a truncated file), and
// checkpoints whose config.json, index or shards lie. Each is refused with a message naming the
// file, the tensor and the offset where there is one, and leaves nothing behind.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/convert/convert.h"
#include "engine/convert/hf-json.h"
#include "engine/convert/safetensors.h"
#include "engine/convert/spm-model.h"
#include "support/temp-dir.h"
#include "testdata.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;
using convert::parse_safetensors;

std::vector<uint8_t> st_bytes(const std::string& header, size_t data_bytes, uint64_t claimed_len = UINT64_MAX) {
  const uint64_t n = claimed_len == UINT64_MAX ? header.size() : claimed_len;
  std::vector<uint8_t> b(8);
  for (int i = 0; i < 8; ++i) b[size_t(i)] = uint8_t(n >> (8 * i));
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + data_bytes, 0);
  return b;
}

// The error message, or "" when parsing succeeded.
std::string st_error(const std::vector<uint8_t>& b) {
  auto r = parse_safetensors(b, "x.safetensors");
  return r.ok() ? "" : r.error().msg;
}

void expect_has(const std::string& msg, std::initializer_list<const char*> parts) {
  EXPECT_FALSE(msg.empty()) << "accepted";
  for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "\"" << p << "\" not in: " << msg;
}

TEST(SafetensorsHostile, WellFormedFileParses) {
  auto r = parse_safetensors(
      st_bytes(R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
               R"("b":{"dtype":"BF16","shape":[4],"data_offsets":[24,32]}})",
               32),
      "x.safetensors");
  ASSERT_TRUE(r.ok()) << r.error().msg;
  ASSERT_NE(r->find("a"), nullptr);
  EXPECT_EQ(r->find("a")->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(r->find("b")->n_bytes(), 8u);
  EXPECT_EQ(r->metadata.at("format"), "pt");
}

TEST(SafetensorsHostile, HeaderLengthPastTheFile) {
  expect_has(st_error(st_bytes("{}", 0, 1000)), {"x.safetensors", "header length 1000", "offset 0", "past the end"});
  expect_has(st_error(st_bytes("{}", 0, uint64_t(1) << 62)), {"x.safetensors", "over the 100 MB limit"});
  expect_has(st_error({1, 2, 3}), {"x.safetensors", "too short"});
}

TEST(SafetensorsHostile, HeaderNotJson) {
  expect_has(st_error(st_bytes("{\"a\": [1, 2", 0)), {"x.safetensors", "not valid JSON"});
  expect_has(st_error(st_bytes("[1, 2]", 0)), {"not a JSON object"});
  expect_has(st_error(st_bytes(R"({"a": 5})", 0)), {"tensor a", "not an object"});
}

TEST(SafetensorsHostile, RangesPastTheData) {
  // A truncated file: the header promises 24 bytes, 10 are there.
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", 10)),
             {"x.safetensors", "tensor w", "[0, 24)", "past the end of the data (10 bytes"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 10)), {"tensor w", "end before"});
}

TEST(SafetensorsHostile, OverlappingRanges) {
  expect_has(st_error(st_bytes(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                               R"("b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})",
                               24)),
             {"x.safetensors", "tensors a [0, 16) and b [8, 24) overlap"});
}

TEST(SafetensorsHostile, DtypeAndShapeDisagreeWithTheBytes) {
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F16","shape":[3,4],"data_offsets":[0,48]}})", 48)),
             {"tensor w", "[0, 48)", "hold 48 bytes", "F16 [3, 4] needs 24"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"Q4","shape":[3],"data_offsets":[0,3]}})", 3)), {"tensor w", "unknown dtype"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)), {"tensor w", "not a size"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4)), {"tensor w", "not a size"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4)), {"tensor w", "data_offsets"});
}

TEST(SafetensorsHostile, AbsurdDimensions) {
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,4]}})", 4)),
             {"tensor w", "absurd"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", 4)),
             {"tensor w", "more than 2^40 elements"});
  expect_has(st_error(st_bytes(R"({"w":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})", 4)),
             {"tensor w", "9 dimensions"});
}

TEST(SpmModelHostile, TruncatedAndMalformed) {
  const std::vector<uint8_t> truncated = {0x0a, 0x20, 0x0a, 0x03, 'a'};  // piece message longer than the file
  auto r = convert::parse_spm_model(truncated, "tokenizer.model");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("tokenizer.model"), std::string::npos);
  EXPECT_NE(r.error().msg.find("offset"), std::string::npos) << r.error().msg;
  const std::vector<uint8_t> bad_type = {0x0a, 0x05, 0x0a, 0x01, 'a', 0x18, 0x09};  // type 9
  r = convert::parse_spm_model(bad_type, "tokenizer.model");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("piece type 9"), std::string::npos) << r.error().msg;
  EXPECT_FALSE(convert::parse_spm_model({}, "tokenizer.model").ok());
}

// ---- whole checkpoints ----------------------------------------------------------------------

class HostileCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    ck_ = tmp_ / "ck";
    const std::string cmd = std::string("/usr/bin/python3 '") + NURL_HF_EXPORTER + "' '" +
                            test::testdata("models/llama-tok512-F32.gguf") + "' '" + ck_.string() + "' --shards 2";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  // Converts and returns the error (or "" on success); nothing may be left behind on error.
  std::string convert_error() {
    const fs::path out = tmp_ / "out.gguf";
    auto r = convert::convert_checkpoint(ck_, out, {});
    if (r.ok()) return "";
    EXPECT_FALSE(fs::exists(out)) << r.error().msg;
    EXPECT_FALSE(fs::exists(out.string() + ".partial")) << r.error().msg;
    return r.error().msg;
  }
  void edit_config(const std::string& key, const convert::Json& value) {
    auto doc = convert::JsonDoc::load(ck_ / "config.json");
    ASSERT_TRUE(doc.ok());
    if (value.is_null()) {
      doc->root.erase(key);
    } else {
      doc->root[key] = value;
    }
    std::ofstream(ck_ / "config.json") << doc->root.dump();
  }
  test::TempDir tmp_;
  fs::path ck_;
};

TEST_F(HostileCheckpoint, TheExportConverts) { EXPECT_EQ(convert_error(), ""); }

// Not hostile, but the same fixture: a Mistral-style config (MistralForCausalLM, the llama layout
// with a sliding_window key that llama.cpp ignores) converts to exactly the llama file.
TEST_F(HostileCheckpoint, MistralStyleConfigConvertsAlike) {
  ASSERT_TRUE(convert::convert_checkpoint(ck_, tmp_ / "llama.gguf", {}).ok());
  edit_config("architectures", convert::Json::array({"MistralForCausalLM"}));
  edit_config("model_type", "mistral");
  edit_config("sliding_window", 4096);
  auto r = convert::convert_checkpoint(ck_, tmp_ / "mistral.gguf", {});
  ASSERT_TRUE(r.ok()) << r.error().msg;
  std::ifstream a(tmp_ / "llama.gguf", std::ios::binary), b(tmp_ / "mistral.gguf", std::ios::binary);
  EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(a), {}, std::istreambuf_iterator<char>(b)));
}

TEST_F(HostileCheckpoint, TruncatedShard) {
  const fs::path shard = ck_ / "model-00002-of-00002.safetensors";
  fs::resize_file(shard, fs::file_size(shard) - 1000);
  expect_has(convert_error(), {"model-00002-of-00002.safetensors", "tensor ", "past the end of the data"});
}

TEST_F(HostileCheckpoint, ConfigWithMoreLayersThanTheWeights) {
  edit_config("num_hidden_layers", 3);
  expect_has(convert_error(), {"tensor model.layers.2.", "missing", "3 layers"});
}

TEST_F(HostileCheckpoint, ConfigWithFewerLayersThanTheWeights) {
  edit_config("num_hidden_layers", 1);
  expect_has(convert_error(), {"tensor model.layers.1.", "does not belong", "1 layers"});
}

TEST_F(HostileCheckpoint, ConfigWithAnotherWidth) {
  edit_config("intermediate_size", 640);
  expect_has(convert_error(), {".safetensors", "tensor model.layers.0.mlp.", "at offset", "has shape", "config.json implies",
                               "intermediate_size 640"});
}

TEST_F(HostileCheckpoint, ConfigWithImpossibleHeads) {
  edit_config("num_key_value_heads", 3);
  expect_has(convert_error(), {"config.json", "num_attention_heads", "not a multiple of num_key_value_heads"});
  edit_config("num_key_value_heads", 2);
  edit_config("hidden_size", 1 << 30);
  expect_has(convert_error(), {"config.json", "hidden_size", "out of range"});
}

TEST_F(HostileCheckpoint, UnknownArchitecture) {
  edit_config("architectures", convert::Json::array({"MambaForCausalLM"}));
  expect_has(convert_error(), {"config.json", "MambaForCausalLM", "not supported", "LlamaForCausalLM"});
  edit_config("architectures", nullptr);
  expect_has(convert_error(), {"config.json", "architectures"});
}

TEST_F(HostileCheckpoint, IndexThatLies) {
  auto ix = convert::JsonDoc::load(ck_ / "model.safetensors.index.json");
  ASSERT_TRUE(ix.ok());
  auto& map = ix->root["weight_map"];
  const std::string first = map.begin().key();
  map[first] = "../elsewhere.safetensors";
  std::ofstream(ck_ / "model.safetensors.index.json") << ix->root.dump();
  expect_has(convert_error(), {"model.safetensors.index.json", first.c_str(), "not a file name"});
  map[first] = "model-00009-of-00009.safetensors";
  std::ofstream(ck_ / "model.safetensors.index.json") << ix->root.dump();
  expect_has(convert_error(), {"shard model-00009-of-00009.safetensors", "missing"});
  map[first] = map.rbegin()->get<std::string>() == "model-00001-of-00002.safetensors" ? "model-00002-of-00002.safetensors"
                                                                                     : "model-00001-of-00002.safetensors";
  std::ofstream(ck_ / "model.safetensors.index.json") << ix->root.dump();
  const std::string msg = convert_error();
  if (!msg.empty()) expect_has(msg, {first.c_str()});
}

TEST_F(HostileCheckpoint, BrokenTokenizerFiles) {
  std::ofstream(ck_ / "tokenizer.model", std::ios::binary) << "not a protobuf at all";
  expect_has(convert_error(), {"tokenizer.model", "not a SentencePiece model"});
}

TEST_F(HostileCheckpoint, CancelLeavesNothing) {
  convert::ConvertOptions o;
  o.on_progress = [](const convert::Progress& p) { return p.tensor_index < 3; };
  const fs::path out = tmp_ / "out.gguf";
  auto r = convert::convert_checkpoint(ck_, out, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::cancelled);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
}

TEST_F(HostileCheckpoint, ResumeAfterCancel) {
  const fs::path ref = tmp_ / "ref.gguf", out = tmp_ / "out.gguf";
  ASSERT_TRUE(convert::convert_checkpoint(ck_, ref, {}).ok());
  convert::ConvertOptions o;
  std::optional<convert::ResumePoint> last;
  o.keep_partial_on_cancel = true;
  o.on_checkpoint = [&](const convert::ResumePoint& rp) { last = rp; };
  o.on_progress = [](const convert::Progress& p) { return p.tensor_index < 7; };
  ASSERT_FALSE(convert::convert_checkpoint(ck_, out, o).ok());
  ASSERT_TRUE(last && fs::exists(out.string() + ".partial"));
  const convert::ResumePoint rp = *last;  // (the resumed run's checkpoints update `last`)
  o.resume = rp;
  int first = -1;
  o.on_progress = [&](const convert::Progress& p) {
    if (first < 0 && p.stage == "tensors") first = p.tensor_index;
    return true;
  };
  auto r = convert::convert_checkpoint(ck_, out, o);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(first, rp.tensors_done);
  std::ifstream a(ref, std::ios::binary), b(out, std::ios::binary);
  EXPECT_TRUE(std::equal(std::istreambuf_iterator<char>(a), {}, std::istreambuf_iterator<char>(b)));
}

}  // namespace
}  // namespace nurl
