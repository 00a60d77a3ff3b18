// Tokenizer speed (a benchmark, not a test): load time of big vocabularies and the time to
// encode ~100 KB of English text on one core (thread CPU time, milliseconds).
// Run: tokenizer_bench [testdata dir]
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf/gguf.h"
#include "engine/tokenizer/tokenizer.h"

namespace {

// CPU time of this thread: on a shared, busy machine it is a steadier figure than wall time.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  }
};

double ms_since(double t0) { return Clock::now() - t0; }

std::string english_text(const std::string& dir, size_t bytes) {
  std::ifstream in(dir + "/golden/qwen2-F16-embQ4_0.json");
  const auto g = nlohmann::json::parse(in);
  std::string para;
  for (const auto& r : g["results"])
    if (r["id"] == "long" || r["id"] == "plain_english") para += r["text"].get<std::string>() + "\n\n";
  std::string out;
  while (out.size() < bytes) out += para;
  out.resize(bytes);
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : NURL_TESTDATA;
  const std::string text = english_text(dir, 100 * 1024);
  std::printf("text: %zu bytes of English\n", text.size());
  const char* files[] = {"models/qwen2-F16-embQ4_0.gguf", "models/gemma3-F16-embQ4_0.gguf",
                         "vocab/ggml-vocab-llama-spm.gguf", "models/phi3-F16-embQ4_K.gguf",
                         "vocab/ggml-vocab-gpt-2.gguf"};
  for (const char* rel : files) {
    auto t0 = Clock::now();
    auto f = nurl::gguf::File::open(dir + "/" + rel);
    if (!f.ok()) {
      std::fprintf(stderr, "%s: %s\n", rel, f.error().msg.c_str());
      return 1;
    }
    const double open_ms = ms_since(t0);
    t0 = Clock::now();
    auto tok = nurl::Tokenizer::from_gguf(*f);
    if (!tok.ok()) {
      std::fprintf(stderr, "%s: %s\n", rel, tok.error().msg.c_str());
      return 1;
    }
    const double load_ms = ms_since(t0);
    std::vector<double> runs;
    size_t n_tokens = 0;
    for (int i = 0; i < 9; ++i) {
      t0 = Clock::now();
      const auto ids = tok->encode(text, true, true);
      runs.push_back(ms_since(t0));
      n_tokens = ids.size();
    }
    std::sort(runs.begin(), runs.end());
    t0 = Clock::now();
    const auto ids = tok->encode(text, true, true);
    const std::string back = tok->decode(ids, false);
    const double decode_ms = ms_since(t0) - runs[runs.size() / 2];
    std::printf("%-34s %-5s n_vocab %6d | gguf open %6.1f ms, tokenizer build %6.1f ms | "
                "encode 100 KB: median %5.2f ms (min %5.2f) -> %zu tokens | decode %5.2f ms\n",
                rel, std::string(nurl::tokenizer_model_name(tok->model())).c_str(), tok->n_vocab(),
                open_ms, load_ms, runs[runs.size() / 2], runs.front(), n_tokens, decode_ms);
  }
  return 0;
}
