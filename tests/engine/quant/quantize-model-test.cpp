// quantize_model against llama-quantize, whose files are the oracle:
//  - the llama-tok512 ladder (made by `llama-quantize --pure` from the F32 master) and its Q4_K_M
//    (llama-quantize's standard mixture) are reproduced byte for byte, metadata included;
//  - every mixture on synthetic models with 16 layers (GQA 2 and 4, tied and untied output, fused
//    qkv, rows that fit no 256-block) equals what llama-quantize writes at test time, byte for
//    byte; the phi3 Q4_K_M test file's per-tensor types are reproduced from its F16 sibling;
//  - threads, cancel, resume of an intact partial file, restart from a damaged one.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>

#include "engine/arch/golden-check.h"
#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"
#include "engine/quant/quantize-model.h"
#include "support/llama-cpp-tools.h"
#include "support/temp-dir.h"
#include "testdata.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;

std::string model(const std::string& f) { return test::testdata("models/" + f); }

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// First differing byte, described (or "" when equal).
std::string compare_files(const fs::path& a, const fs::path& b) {
  const auto x = read_all(a), y = read_all(b);
  if (x == y) return "";
  size_t i = 0;
  while (i < x.size() && i < y.size() && x[i] == y[i]) ++i;
  return a.filename().string() + " (" + std::to_string(x.size()) + " bytes) and " + b.filename().string() + " (" +
         std::to_string(y.size()) + " bytes) differ first at byte " + std::to_string(i);
}

Result<void> quantize(const fs::path& in, const fs::path& out, const std::string& type, bool pure, int threads = 1) {
  quant::QuantizeOptions o;
  o.type = type;
  o.pure = pure;
  o.threads = threads;
  return quant::quantize_model(in, out, o);
}

TEST(QuantizeModel, PureLadderIsLlamaQuantizesBytes) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir tmp;
  int threads = 1;
  // The ladder's k-quant files were made with the _S names (general.file_type 11, 14, 16).
  const std::pair<const char*, const char*> ladder[] = {
      {"F16", "F16"},   {"BF16", "BF16"}, {"Q8_0", "Q8_0"},   {"Q4_0", "Q4_0"},   {"Q4_1", "Q4_1"},   {"Q5_0", "Q5_0"},
      {"Q5_1", "Q5_1"}, {"Q2_K", "Q2_K"}, {"Q3_K", "Q3_K_S"}, {"Q4_K", "Q4_K_S"}, {"Q5_K", "Q5_K_S"}, {"Q6_K", "Q6_K"}};
  for (const auto& [t, type] : ladder) {
    SCOPED_TRACE(t);
    const fs::path out = tmp / (std::string(t) + ".gguf");
    auto r = quantize(model("llama-tok512-F32.gguf"), out, type, /*pure=*/true, threads);
    ASSERT_TRUE(r.ok()) << r.error().msg;
    EXPECT_EQ(compare_files(out, model(std::string("llama-tok512-") + t + ".gguf")), "");
    threads = 3 - threads;  // alternate 1 and 2 threads: the bytes must not depend on it
  }
}

TEST(QuantizeModel, Q4KMIsLlamaQuantizesBytes) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir tmp;
  auto r = quantize(model("llama-tok512-F32.gguf"), tmp / "q4km.gguf", "q4_k_m", false, 2);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(compare_files(tmp / "q4km.gguf", model("llama-tok512-Q4_K_M.gguf")), "");
  test::check_golden_forward((tmp / "q4km.gguf").string(), "llama-tok512-Q4_K_M");
}

TEST(QuantizeModel, Phi3Q4KMTypesMatchLlamaQuantizesFile) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir tmp;
  auto r = quantize(model("phi3-F16-embQ4_K.gguf"), tmp / "p.gguf", "Q4_K_M", false, 2);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  auto ours = gguf::File::open((tmp / "p.gguf").string());
  auto ref = gguf::File::open(model("phi3-Q4_K_M.gguf"));
  ASSERT_TRUE(ours.ok() && ref.ok());
  ASSERT_EQ(ours->tensors().size(), ref->tensors().size());
  for (size_t i = 0; i < ref->tensors().size(); ++i) {
    EXPECT_EQ(ours->tensors()[i].name, ref->tensors()[i].name);
    EXPECT_EQ(type_name(ours->tensors()[i].type), type_name(ref->tensors()[i].type)) << ref->tensors()[i].name;
  }
}

// A synthetic model for the mixture rules: n_layer layers of random f32 weights.
struct Synth {
  const char* arch;
  int n_layer, n_embd, n_head, n_kv, n_ff;
  bool fused, tied;
};

void write_synth(const Synth& s, const fs::path& path) {
  gguf::Writer w;
  const std::string a = s.arch;
  const int hd = s.n_embd / s.n_head, n_vocab = 256;
  w.add_string("general.architecture", a).add_string("general.name", "synth").add_u32("general.file_type", 0);
  w.add_u32(a + ".block_count", uint32_t(s.n_layer)).add_u32(a + ".embedding_length", uint32_t(s.n_embd));
  w.add_u32(a + ".feed_forward_length", uint32_t(s.n_ff)).add_u32(a + ".attention.head_count", uint32_t(s.n_head));
  w.add_u32(a + ".attention.head_count_kv", uint32_t(s.n_kv)).add_u32(a + ".context_length", 4096);
  w.add_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
  std::vector<std::string> toks;
  for (int i = 0; i < n_vocab; ++i) toks.push_back("t" + std::to_string(i));
  w.add_string("tokenizer.ggml.model", "llama").add_string_array("tokenizer.ggml.tokens", toks);
  static std::vector<std::vector<float>> keep;  // tensor data must outlive the writer
  keep.clear();
  std::mt19937 rng(42);
  std::normal_distribution<float> nd(0.f, 0.05f);
  auto t = [&](const std::string& name, std::initializer_list<uint64_t> ne) {
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    keep.emplace_back(n);
    for (auto& x : keep.back()) x = nd(rng);
    w.add_tensor(name, GgmlType::F32, ne, gguf::as_bytes(keep.back()));
  };
  const uint64_t E = uint64_t(s.n_embd), F = uint64_t(s.n_ff), q = uint64_t(s.n_head * hd), kv = uint64_t(s.n_kv * hd);
  t("token_embd.weight", {E, n_vocab});
  for (int i = 0; i < s.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    t(b + "attn_norm.weight", {E});
    if (s.fused) {
      t(b + "attn_qkv.weight", {E, q + 2 * kv});
      t(b + "ffn_up.weight", {E, 2 * F});
    } else {
      t(b + "attn_q.weight", {E, q});
      t(b + "attn_k.weight", {E, kv});
      t(b + "attn_v.weight", {E, kv});
      t(b + "ffn_gate.weight", {E, F});
      t(b + "ffn_up.weight", {E, F});
    }
    t(b + "attn_output.weight", {q, E});
    t(b + "ffn_norm.weight", {E});
    t(b + "ffn_down.weight", {F, E});
  }
  t("output_norm.weight", {E});
  if (!s.tied) t("output.weight", {E, n_vocab});
  auto r = w.write_to_file(path.string());
  ASSERT_TRUE(r.ok()) << r.error().msg;
}

TEST(QuantizeModel, MixturesMatchLlamaQuantize) {
  NURL_REQUIRE_TESTDATA();
  std::string why;
  const auto* tools = test::LlamaCppTools::get(&why);
  ASSERT_NE(tools, nullptr) << why;
  test::TempDir tmp;
  // Each model with the types whose rules it exercises (the first: all of them).
  const char* all[] = {"Q4_K_M", "Q4_K_S", "Q5_K_M", "Q5_K_S", "Q6_K", "Q3_K_M", "Q3_K_S", "Q3_K_L", "Q2_K", "Q4_0", "Q8_0", nullptr};
  const char* gqa4[] = {"Q2_K", "Q4_K_M", nullptr};
  const char* fused[] = {"Q4_K_M", "Q4_K_S", "Q3_K_M", "Q2_K", nullptr};
  const char* narrow[] = {"Q2_K", "Q3_K_M", "Q4_K_M", "Q5_K_S", "Q6_K", "Q4_0", nullptr};
  const std::pair<Synth, const char**> models[] = {
      {{"llama", 16, 256, 2, 1, 256, false, false}, all},   // 16 layers: every layer-dependent rule
      {{"llama", 8, 256, 8, 2, 256, false, true}, gqa4},    // GQA 4 (Q2_K's attn_v rule), tied output
      {{"phi3", 8, 256, 4, 2, 256, true, true}, fused},     // fused qkv and gate|up
      {{"qwen2", 4, 128, 4, 1, 256, false, true}, narrow},  // rows of 128: every fallback
  };
  for (const auto& [s, types] : models) {
    const fs::path in = tmp / (std::string(s.arch) + std::to_string(s.n_layer) + (s.tied ? "t" : "u") + ".gguf");
    write_synth(s, in);
    if (HasFatalFailure()) return;
    for (const char** tp = types; *tp; ++tp) {
      const char* t = *tp;
      SCOPED_TRACE(in.filename().string() + " " + t);
      const fs::path ours = tmp / "ours.gguf", theirs = tmp / "theirs.gguf";
      auto r = quantize(in, ours, t, false, 2);
      ASSERT_TRUE(r.ok()) << r.error().msg;
      ASSERT_EQ(tools->run("llama-quantize", "'" + in.string() + "' '" + theirs.string() + "' " + t + " 2", nullptr), 0);
      EXPECT_EQ(compare_files(ours, theirs), "");
    }
  }
}

TEST(QuantizeModel, CancelResumeAndRestart) {
  NURL_REQUIRE_TESTDATA();
  test::TempDir tmp;
  const fs::path in = model("llama-tok512-F32.gguf"), out = tmp / "q.gguf";
  const fs::path partial = out.string() + ".partial";

  // Cancelled without keeping: nothing left.
  quant::QuantizeOptions o;
  o.type = "Q4_K_M";
  o.on_progress = [](const convert::Progress& p) { return p.tensor_index < 4; };
  auto r = quant::quantize_model(in, out, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::cancelled);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(partial));

  // Cancelled keeping the partial file; the last checkpoint resumes it to the same bytes.
  std::optional<convert::ResumePoint> last;
  o.keep_partial_on_cancel = true;
  o.on_checkpoint = [&](const convert::ResumePoint& rp) { last = rp; };
  o.on_progress = [](const convert::Progress& p) { return p.tensor_index < 9; };
  r = quant::quantize_model(in, out, o);
  ASSERT_FALSE(r.ok());
  ASSERT_TRUE(fs::exists(partial));
  ASSERT_TRUE(last.has_value());
  EXPECT_GE(last->tensors_done, 9);  // tensor 9 may complete in the chunk whose report cancels
  int first_seen = -1;
  const convert::ResumePoint rp = *last;  // (the resumed run's checkpoints update `last`)
  o.resume = rp;
  o.on_progress = [&](const convert::Progress& p) {
    if (first_seen < 0 && p.stage == "tensors") first_seen = p.tensor_index;
    return true;
  };
  r = quant::quantize_model(in, out, o);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(first_seen, rp.tensors_done) << "resumed at the checkpoint";
  EXPECT_FALSE(fs::exists(partial));
  EXPECT_EQ(compare_files(out, model("llama-tok512-Q4_K_M.gguf")), "");

  // A partial file whose prefix no longer matches its checkpoint: started over, still exact.
  fs::remove(out);
  o.resume.reset();
  o.on_progress = [](const convert::Progress& p) { return p.tensor_index < 9; };
  r = quant::quantize_model(in, out, o);
  ASSERT_FALSE(r.ok());
  const convert::ResumePoint damaged = *last;
  {
    std::fstream f(partial, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(std::streamoff(damaged.file_offset - 100));
    const char c = char(f.get() ^ 0xff);
    f.seekp(std::streamoff(damaged.file_offset - 100));
    f.put(c);
  }
  o.resume = damaged;
  first_seen = -1;
  o.on_progress = [&](const convert::Progress& p) {
    if (first_seen < 0 && p.stage == "tensors") first_seen = p.tensor_index;
    return true;
  };
  r = quant::quantize_model(in, out, o);
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(first_seen, 0) << "a damaged partial file is not resumed";
  EXPECT_EQ(compare_files(out, model("llama-tok512-Q4_K_M.gguf")), "");
}

TEST(QuantizeModel, RefusesUnknownTypesAndMissingInput) {
  test::TempDir tmp;
  auto r = quantize(model("llama-tok512-F32.gguf"), tmp / "x.gguf", "Q9_Z", false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::invalid_argument);
  EXPECT_NE(r.error().msg.find("Q4_K_M"), std::string::npos) << r.error().msg;
  r = quantize(tmp / "missing.gguf", tmp / "x.gguf", "Q8_0", false);
  ASSERT_FALSE(r.ok());
  EXPECT_FALSE(fs::exists(tmp / "x.gguf"));
  EXPECT_FALSE(fs::exists(tmp / "x.gguf.partial"));
}

}  // namespace
}  // namespace nurl
