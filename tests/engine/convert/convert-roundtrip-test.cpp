// Round trip through a Hugging Face checkpoint: hf-export.py writes a checkpoint from a GGUF test
// model (safetensors shards, config.json, tokenizer files; f32 or bf16), convert_checkpoint turns
// it back into GGUF, and the result must equal the original:
//  - every tensor: exactly (f32 out of f32, bf16 out of bf16, the gemma norms' 1 + w as the two
//    conversions compute it), within f16's rounding for f16 out, within q8_0's error for q8_0;
//  - the architecture and tokenizer metadata (sizes, heads, eps, rope, tokens, types, scores,
//    merges, special ids, flags, chat template);
//  - the tokenizer goldens (our tokenizer on the converted file); llama.cpp as an independent
//    loader: llama-tokenize's ids, and llama-cli loading every tensor and generating (the same
//    text as from the original file where the conversion is exact);
//  - llama.cpp's forward goldens (logits, greedy tokens) of the original file.
// How the round trip can catch a transform that is wrong both ways: the exporter is written from
// transformers' conventions, not from the converter, and checks numerically that the attention
// scores its exported q/k give with transformers' rope equal those of the GGUF weights with GGML's
// rope (see hf-export.py); the converter is then checked against the original GGUF file, which
// llama.cpp's goldens were made from.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "engine/arch/golden-check.h"
#include "engine/convert/convert.h"
#include "engine/gguf/gguf.h"
#include "engine/quant/blocks.h"
#include "engine/quant/quant.h"
#include "engine/tokenizer/tokenizer.h"
#include "support/llama-cpp-tools.h"
#include "support/temp-dir.h"
#include "testdata.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Case {
  const char* model;      // models/<model>.gguf
  const char* dtype;      // checkpoint dtype
  int shards;
  const char* out_type;   // convert_checkpoint's type
  const char* golden;     // golden/<golden>.json to run the converted file against, or null
  const char* tok_golden; // golden/tokenizer/<tok_golden>.json
  bool merges_as_pairs;
};
// gtest prints a parameter through this (its bytes otherwise).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.model << " " << c.dtype << " in " << c.shards << " shard(s) to " << c.out_type;
}

const Case kCases[] = {
    {"llama-tok512-F32", "f32", 1, "f32", "llama-tok512-F32", "stories260K", false},
    // A bf16 checkpoint holds rounded weights (norms included), so it is checked against the
    // rounded originals but not against the forward goldens of any file.
    {"llama-tok512-F32", "bf16", 3, "bf16", nullptr, "stories260K", false},
    {"stories260K", "f32", 2, "f32", "stories260K", "stories260K", false},
    {"qwen2-F16-embQ4_0", "f32", 2, "f16", "qwen2-F16-embQ4_0", "qwen2-F16-embQ4_0", false},
    {"qwen3-F16-embQ4_0", "bf16", 1, "q8_0", nullptr, "qwen3-F16-embQ4_0", true},
    {"gemma3-F16-embQ4_0", "f32", 1, "f16", "gemma3-F16-embQ4_0", "gemma3-F16-embQ4_0", false},
    {"phi3-F16-embQ4_K", "f32", 2, "f16", "phi3-F16-embQ4_K", "ggml-vocab-phi-3", false},
    {"phi3-F16-embQ4_K", "bf16", 1, "bf16", nullptr, "ggml-vocab-phi-3", false},
};

std::string exporter() { return NURL_HF_EXPORTER; }

// Writes the checkpoint for a case into dir (fatal on failure).
void export_checkpoint(const Case& c, const fs::path& dir) {
  const std::string cmd = "/usr/bin/python3 '" + exporter() + "' '" + test::testdata(std::string("models/") + c.model + ".gguf") +
                          "' '" + dir.string() + "' --dtype " + c.dtype + " --shards " + std::to_string(c.shards) +
                          (c.merges_as_pairs ? " --merges-as-pairs" : "");
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

std::vector<float> dequant(const gguf::TensorInfo& t) {
  std::vector<float> out(t.n_elements);
  const QuantTraits* q = quant_traits(t.type);
  EXPECT_NE(q, nullptr) << t.name;
  if (q) q->dequant_row(t.data, out.data(), int64_t(t.n_elements));
  return out;
}

float round_bf16(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b = (b + 0x7fff + ((b >> 16) & 1)) & 0xffff0000u;
  std::memcpy(&x, &b, 4);
  return x;
}

// What the checkpoint holds for an original value (the exporter's arithmetic), and what the
// converter makes of it, as f32.
float expected_value(float orig, bool gemma_norm, const std::string& dtype) {
  float v = gemma_norm ? orig - 1.0f : orig;
  if (dtype == "bf16") v = round_bf16(v);
  if (dtype == "f16") v = fp16_to_f32(f32_to_fp16(v));
  return gemma_norm ? v + 1.0f : v;
}

void check_tensors(const Case& c, const gguf::File& orig, const gguf::File& conv) {
  const std::string arch = *orig.get_string("general.architecture");
  ASSERT_EQ(conv.tensors().size(), orig.tensors().size());
  double worst_q8 = 0;
  for (const auto& t : orig.tensors()) {
    SCOPED_TRACE(t.name);
    const gguf::TensorInfo* u = conv.tensor(t.name);
    ASSERT_NE(u, nullptr) << "missing in the converted file";
    ASSERT_EQ(u->n_dims, t.n_dims);
    ASSERT_EQ(u->ne, t.ne);
    const bool matrix = t.n_dims == 2;
    const std::string out = c.out_type;
    if (!matrix) {
      EXPECT_EQ(u->type, GgmlType::F32);
    } else if (out == "q8_0") {
      EXPECT_EQ(u->type, t.ne[0] % 32 == 0 ? GgmlType::Q8_0 : GgmlType::F16);
    } else {
      EXPECT_EQ(type_name(u->type), out == "f32" ? "f32" : out == "f16" ? "f16" : "bf16");
    }
    const bool gemma_norm = arch == "gemma3" && t.name.ends_with("norm.weight");
    const std::vector<float> a = dequant(t), b = dequant(*u);
    double err2 = 0, ref2 = 0;
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      float want = expected_value(a[i], gemma_norm, c.dtype);
      if (matrix && out == "f16") want = fp16_to_f32(f32_to_fp16(want));
      if (matrix && out == "bf16") want = round_bf16(want);
      if (matrix && out == "q8_0") {
        err2 += double(b[i] - want) * (b[i] - want);
        ref2 += double(want) * want;
        continue;
      }
      if (b[i] != want && bad++ == 0) first_bad = i;
    }
    EXPECT_EQ(bad, 0u) << "first at element " << first_bad << ": " << b[first_bad] << " vs "
                       << expected_value(a[first_bad], gemma_norm, c.dtype);
    if (ref2 > 0) worst_q8 = std::max(worst_q8, std::sqrt(err2 / ref2));
  }
  // q8_0: one scale per 32 weights from their absolute maximum (rms error ≈ step/√12, see the
  // quant oracle test's bound).
  EXPECT_LE(worst_q8, 0.0075);
}

// Keys the converter must reproduce: every key of the original under the architecture and the
// tokenizer (ids that are not tokens aside).
void check_metadata(const gguf::File& orig, const gguf::File& conv) {
  const std::string arch = *orig.get_string("general.architecture");
  EXPECT_EQ(*conv.get_string("general.architecture"), arch);
  const int64_t n_vocab = int64_t(orig.get_array("tokenizer.ggml.tokens").value()->items.size());
  for (const auto& kv : orig.metadata()) {
    const bool ours = kv.key.starts_with(arch + ".") || kv.key.starts_with("tokenizer.");
    if (!ours) continue;
    if (kv.key.ends_with("_token_id") && kv.value.as_int().value_or(-1) >= n_vocab) continue;  // "none" as -1
    if (kv.key == "tokenizer.ggml.seperator_token_id") continue;
    const gguf::Value* v = conv.find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key << " is missing";
    if (kv.value.as_int() && v->as_int()) {
      EXPECT_EQ(*kv.value.as_int(), *v->as_int()) << kv.key;
    } else {
      EXPECT_EQ(kv.value.to_string(SIZE_MAX), v->to_string(SIZE_MAX)) << kv.key;
    }
  }
}

void check_tokenizer_golden(const std::string& conv_path, const std::string& golden) {
  auto f = gguf::File::open(conv_path);
  ASSERT_TRUE(f.ok());
  auto tok = Tokenizer::from_gguf(*f);
  ASSERT_TRUE(tok.ok()) << tok.error().msg;
  std::ifstream in(test::testdata("golden/tokenizer/" + golden + ".json"));
  const json g = json::parse(in);
  const bool adds_bos = g["metadata"]["llama_cpp_adds_bos_by_default"];
  int checked = 0;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    EXPECT_EQ(tok->encode(text, adds_bos, true), c["ids"].get<std::vector<int32_t>>()) << json(text).dump();
    if (c.contains("ids_no_parse_special")) {
      EXPECT_EQ(tok->encode(text, adds_bos, false), c["ids_no_parse_special"].get<std::vector<int32_t>>()) << json(text).dump();
    }
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

// llama.cpp's own loader and tokenizer on the converted file: a few golden strings.
void check_llama_tokenize(const std::string& conv_path, const std::string& golden, const fs::path& tmp) {
  std::string why;
  const auto* tools = test::LlamaCppTools::get(&why);
  ASSERT_NE(tools, nullptr) << why;
  std::ifstream in(test::testdata("golden/tokenizer/" + golden + ".json"));
  const json g = json::parse(in);
  int n = 0;
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    if (text.empty() || text.size() > 200 || n >= 4) continue;
    ++n;
    const fs::path tf = tmp / "text.txt";
    std::ofstream(tf, std::ios::binary) << text;
    std::string out;
    const int rc = tools->run("llama-tokenize", "-m '" + conv_path + "' -f '" + tf.string() + "' --ids --no-escape --log-disable",
                              &out, (tmp / "llama-tokenize.log").string());
    ASSERT_EQ(rc, 0) << "llama-tokenize could not load the converted file; see " << (tmp / "llama-tokenize.log");
    const size_t lb = out.find('['), rb = out.rfind(']');
    ASSERT_NE(lb, std::string::npos) << out;
    EXPECT_EQ(json::parse(out.substr(lb, rb - lb + 1)).get<std::vector<int32_t>>(), c["ids"].get<std::vector<int32_t>>())
        << json(text).dump();
  }
  EXPECT_GE(n, 3);
}

// llama.cpp loading the whole converted file (every tensor) and generating greedily; where the
// conversion is exact its text must be the original file's.
std::string llama_cli_reply(const std::string& model, const fs::path& tmp) {
  const auto* tools = test::LlamaCppTools::get(nullptr);
  if (!tools) return "(no llama-cli)";
  std::string out;
  const int rc = tools->run("llama-cli", "-m '" + model + "' -p 'Once upon a time' -n 16 --temp 0 -st --simple-io -t 1 </dev/null",
                            &out, (tmp / "llama-cli.log").string());
  if (rc != 0) return "(llama-cli failed with status " + std::to_string(rc) + ", see " + (tmp / "llama-cli.log").string() + ")";
  const size_t at = out.find("> Once upon a time"), end = out.find("[ Prompt:");
  if (at == std::string::npos || end == std::string::npos || end < at) return "(no reply in: " + out.substr(0, 300) + ")";
  return out.substr(at, end - at);
}

void check_llama_cli(const std::string& conv, const std::string& orig, bool exact, const fs::path& tmp) {
  const std::string got = llama_cli_reply(conv, tmp);
  ASSERT_EQ(got.rfind("> Once upon a time", 0), 0u) << got;
  if (exact) {
    EXPECT_EQ(got, llama_cli_reply(orig, tmp));
  }
}

class ConvertRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(ConvertRoundTrip, GivesTheOriginalBack) {
  NURL_REQUIRE_TESTDATA();
  const Case& c = GetParam();
  test::TempDir tmp;
  // Named after the model, as a downloaded checkpoint's directory is (general.name comes from it).
  const fs::path ck = tmp / c.model, out = tmp / "converted.gguf";
  export_checkpoint(c, ck);
  if (HasFatalFailure()) return;

  convert::ConvertOptions o;
  o.out_type = c.out_type;
  o.threads = 2;
  int progress_calls = 0;
  o.on_progress = [&](const convert::Progress&) { return ++progress_calls > 0; };
  auto r = convert::convert_checkpoint(ck, out, o);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_GT(progress_calls, 0);
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));

  auto orig = gguf::File::open(test::testdata(std::string("models/") + c.model + ".gguf"));
  auto conv = gguf::File::open(out.string());
  ASSERT_TRUE(orig.ok() && conv.ok());
  check_tensors(c, *orig, *conv);
  check_metadata(*orig, *conv);
  check_tokenizer_golden(out.string(), c.tok_golden);
  check_llama_tokenize(out.string(), c.tok_golden, tmp.path());
  check_llama_cli(out.string(), test::testdata(std::string("models/") + c.model + ".gguf"),
                  std::string(c.out_type) == "f32", tmp.path());
  if (c.golden) test::check_golden_forward(out.string(), c.golden);
}

INSTANTIATE_TEST_SUITE_P(Models, ConvertRoundTrip, ::testing::ValuesIn(kCases), [](const auto& info) {
  std::string s = std::string(info.param.model) + "_" + info.param.dtype + "_" + std::to_string(info.param.shards) + "_" +
                  info.param.out_type;
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
});

// Converting straight to a mixture gives llama-quantize's tensors: the llama-tok512 Q4_K_M file
// was made by llama-quantize from the F32 master this checkpoint is exported from.
TEST(ConvertToMixture, Q4KMTensorsAreLlamaQuantizes) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir tmp;
  const Case c = {"llama-tok512-F32", "f32", 1, "Q4_K_M", nullptr, "stories260K", false};
  export_checkpoint(c, tmp / "ck");
  if (HasFatalFailure()) return;
  convert::ConvertOptions o;
  o.out_type = "Q4_K_M";
  auto r = convert::convert_checkpoint(tmp / "ck", tmp / "q.gguf", o);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto ref = gguf::File::open(test::testdata("models/llama-tok512-Q4_K_M.gguf"));
  auto conv = gguf::File::open((tmp / "q.gguf").string());
  ASSERT_TRUE(ref.ok() && conv.ok());
  EXPECT_EQ(*conv->get_u32("general.file_type"), *ref->get_u32("general.file_type"));
  for (const auto& t : ref->tensors()) {
    const gguf::TensorInfo* u = conv->tensor(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(type_name(u->type), type_name(t.type)) << t.name;
    ASSERT_EQ(u->n_bytes, t.n_bytes) << t.name;
    EXPECT_EQ(std::memcmp(u->data, t.data, t.n_bytes), 0) << t.name << ": bytes differ from llama-quantize's";
  }
}

}  // namespace
}  // namespace nurl
