// nurl-grammar-bench: what a grammar constraint costs per generated token, against the decode
// step it rides on. Runs constrained generations (temperature 1, so the random-weight test models
// wander through every part of the schema) and times, per token: the token mask (TokenFilter),
// the masked draw (Sampler), the constraint's advance, and the decode step (one-token forward).
// Medians over all tokens of all runs; the first use of each mask key (a walk of the vocabulary
// trie, cached afterwards) is reported apart, as is compiling the grammar and building the trie.
// Also per token: the budget check (the distance to a complete document after the drawn token,
// which every request with a token limit pays) and the shortest-completion mask (what a step
// costs when the document must close). With --budget N each run must finish its document within
// N draws (engine/runtime/budget.h); the runs that did are counted.
//
// usage: nurl-grammar-bench MODEL.gguf [--runs N] [--tokens N] [--threads N] [--budget N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/runtime/budget.h"
#include "engine/runtime/constraints.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/runtime/sampler.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl {
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

const char* kSchemas[] = {
    R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},
        "email":{"type":"string","format":"email"},"tags":{"type":"array","items":{"type":"string","maxLength":12},"maxItems":4},
        "address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"string","pattern":"^[0-9]{5}$"}},"required":["city","zip"]}},
        "required":["name","age","tags","address"]})",
    R"({"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"score":{"type":"number","minimum":0,"maximum":1},
        "label":{"enum":["cat","dog","bird"]}},"required":["id","score","label"]},"maxItems":6})",
    "json",
};

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nurl-grammar-bench MODEL.gguf [--runs N] [--tokens N] [--threads N] [--budget N]\n");
    return 2;
  }
  int runs = 6, max_tokens = 400, threads = 0, budget = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--tokens")) max_tokens = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--budget")) budget = std::atoi(argv[i + 1]);
  }
  if (budget > 0) max_tokens = budget;
  auto model = Model::load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.error().msg.c_str());
    return 1;
  }
  auto tok = Tokenizer::from_gguf((*model)->file());
  if (!tok.ok()) return 1;
  ContextOptions co;
  co.n_ctx = 2048;
  co.n_threads = threads;
  auto ctx = Context::create(*model, co);
  if (!ctx.ok()) {
    std::fprintf(stderr, "%s\n", ctx.error().msg.c_str());
    return 1;
  }
  ConstraintCompiler cc(*tok);
  auto t0 = Clock::now();
  cc.vocab();
  const double trie_ms = us_since(t0) / 1000;

  std::vector<double> mask_us, first_us, sample_us, accept_us, decode_us, compile_ms, check_us, shortest_us;
  int n_tokens = 0, n_complete = 0;
  for (int r = 0; r < runs; ++r) {
    const char* schema = kSchemas[r % 3];
    t0 = Clock::now();
    auto filter = cc.format(schema);
    if (!filter.ok()) {
      std::fprintf(stderr, "%s\n", filter.error().msg.c_str());
      return 1;
    }
    compile_ms.push_back(us_since(t0) / 1000);
    grammar::Constraint c(*filter);
    std::vector<uint64_t> mask((*filter)->n_words()), scratch((*filter)->n_words());
    Options o;
    o.temperature = 1.0f;
    o.top_k = 0;
    o.top_p = 1.0f;
    o.repeat_penalty = 1.0f;
    o.seed = 100 + r;
    Sampler sampler(o, (*model)->n_vocab());
    (*ctx)->clear(0);
    std::vector<int32_t> prompt = tok->encode("Reply with JSON.", true, true);
    std::vector<BatchEntry> batch;
    for (size_t i = 0; i < prompt.size(); ++i) batch.push_back({prompt[i], static_cast<int32_t>(i), 0, i + 1 == prompt.size()});
    if (!(*ctx)->decode(batch).ok()) return 1;
    for (int step = 0; step < max_tokens; ++step) {
      const size_t entries = (*filter)->stats().entries;
      t0 = Clock::now();
      c.mask(mask);
      const double m = us_since(t0);
      ((*filter)->stats().entries > entries ? first_us : mask_us).push_back(m);
      t0 = Clock::now();
      const Sample s = budget > 0 ? sample_within(sampler, c, (*ctx)->logits(0), mask, scratch, budget - step)
                                  : sampler.sample((*ctx)->logits(0), mask);
      sample_us.push_back(us_since(t0));
      t0 = Clock::now();
      c.distance_after(s.id);
      check_us.push_back(us_since(t0));
      t0 = Clock::now();
      c.mask_shortest(scratch);
      shortest_us.push_back(us_since(t0));
      if (tok->is_eog(s.id)) {
        n_complete += c.can_finish();
        break;
      }
      t0 = Clock::now();
      c.accept(s.id);
      accept_us.push_back(us_since(t0));
      sampler.accept(s.id);
      BatchEntry e{s.id, (*ctx)->n_pos(0), 0, true};
      t0 = Clock::now();
      if (!(*ctx)->decode(std::span<const BatchEntry>(&e, 1)).ok()) return 1;
      decode_us.push_back(us_since(t0));
      ++n_tokens;
    }
  }
  const double mask_med = pct(mask_us, 0.5), dec_med = pct(decode_us, 0.5);
  std::printf("model %s, n_vocab %d, %d runs, %d tokens\n", argv[1], (*model)->n_vocab(), runs, n_tokens);
  std::printf("vocabulary trie: %.1f ms (once per model); grammar compile: median %.2f ms\n", trie_ms, pct(compile_ms, 0.5));
  std::printf("mask (cached keys): median %.1f us, p90 %.1f us, p99 %.1f us (%zu steps)\n", mask_med, pct(mask_us, 0.9),
              pct(mask_us, 0.99), mask_us.size());
  std::printf("mask (first use of a key, then cached): median %.1f us, max %.1f us (%zu steps)\n", pct(first_us, 0.5),
              pct(first_us, 1.0), first_us.size());
  std::printf("masked draw: median %.1f us; constraint advance: median %.1f us\n", pct(sample_us, 0.5), pct(accept_us, 0.5));
  std::printf("budget check (distance after the draw): median %.1f us, p90 %.1f us\n", pct(check_us, 0.5),
              pct(check_us, 0.9));
  std::printf("shortest-completion mask: median %.1f us, p90 %.1f us, max %.1f us\n", pct(shortest_us, 0.5),
              pct(shortest_us, 0.9), pct(shortest_us, 1.0));
  if (budget > 0)
    std::printf("budget %d draws: %d of %d runs ended with a complete document\n", budget, n_complete, runs);
  std::printf("decode step: median %.1f us\n", dec_med);
  std::printf("mask / decode step: %.1f%% (median over median)\n", dec_med > 0 ? 100 * mask_med / dec_med : 0);
  return 0;
}

}  // namespace
}  // namespace nurl

int main(int argc, char** argv) { return nurl::run(argc, argv); }
