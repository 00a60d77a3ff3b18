// nurl-bench: speed of the engine on one GGUF file, in llama-bench's terms.
//   pp512 : prompt processing, one 512-token batch into an empty cache, tokens/s
//   tg128 : generation, 128 single-token steps after a 1-token prompt, tokens/s (--n-gen N: N steps)
//   pp512@dN : with --depth N, pp512 with N tokens already in the cache (llama-bench -d N)
//   tgN×P : with --parallel P, generation of P sequences decoded together (one batch of P tokens
//           per step, as the daemon batches parallel requests), total tokens/s over all of them
//   ttft300 : time to first token for a 300-token prompt through Session::generate (greedy)
//   peak RSS of the process (getrusage), with the file size for comparison
// Token ids are random (speed does not depend on them). Each figure is the median of --reps runs.
// Output: one human-readable line per figure and, with --json, one JSON object on the last line.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/runtime/session.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int usage() {
  std::fprintf(stderr, "usage: nurl-bench MODEL.gguf [--threads N] [--reps N] [--json] [--depth N] [--n-gen N] [--parallel P] [--skip-pp] [--skip-tg] [--skip-ttft] [--no-pack] [--tier avx2|avx_vnni|avx512]\n");
  return 2;
}

int run(int argc, char** argv) {
  if (argc < 2) return usage();
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines appear as they are measured
  std::string path = argv[1];
  int parallel = 0;
  int threads = 2, reps = 3, depth = 0, n_gen = 128;
  bool json = false, skip_pp = false, skip_tg = false, skip_ttft = false;
  LoadOptions lo;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else if (a == "--depth" && i + 1 < argc) depth = std::max(0, std::stoi(argv[++i]));
    else if (a == "--n-gen" && i + 1 < argc) n_gen = std::max(1, std::stoi(argv[++i]));
    else if (a == "--parallel" && i + 1 < argc) parallel = std::max(1, std::stoi(argv[++i]));
    else if (a == "--json") json = true;
    else if (a == "--skip-pp") skip_pp = true;
    else if (a == "--skip-tg") skip_tg = true;
    else if (a == "--skip-ttft") skip_ttft = true;
    else if (a == "--no-pack") lo.pack_weights = false;  // the file's layout (to measure what packing gives)
    else if (a == "--tier" && i + 1 < argc) {  // a lower kernel tier than the CPU's best
      const std::string name = argv[++i];
      bool found = false;
      for (CpuTier t : kCpuTiers)
        if (name == tier_name(t)) lo.max_tier = t, found = true;
      if (!found) return usage();
    }
    else return usage();
  }

  auto t_load = Clock::now();
  auto model = Model::load(path, lo);
  if (!model) {
    std::fprintf(stderr, "%s\n", model.error().msg.c_str());
    return 1;
  }
  const double load_s = seconds_since(t_load);
  auto tok = Tokenizer::from_gguf((*model)->file());
  if (!tok) {
    std::fprintf(stderr, "%s\n", tok.error().msg.c_str());
    return 1;
  }
  ContextOptions co;
  co.n_ctx = std::max(1024, depth + 512);
  co.n_batch = 512;
  co.n_threads = threads;
  co.n_seq = std::max(1, parallel);
  auto ctx = Context::create(*model, co);
  if (!ctx) {
    std::fprintf(stderr, "%s\n", ctx.error().msg.c_str());
    return 1;
  }
  Context& c = **ctx;
  const int n_vocab = (*model)->n_vocab();
  std::mt19937 rng(1);
  std::uniform_int_distribution<int32_t> pick(0, std::min(n_vocab, 32000) - 1);
  auto random_tokens = [&](int n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& x : t) x = pick(rng);
    return t;
  };

  std::printf("model %s (%s, %.1f MiB), threads %d, kernels %s, %.1f MiB packed, load %.2f s\n", path.c_str(),
              (*model)->arch().c_str(), static_cast<double>((*model)->file_size()) / (1 << 20), threads,
              (*model)->kernels().name.c_str(), static_cast<double>((*model)->packed_bytes()) / (1 << 20), load_s);

  // Warm-up: fault the weights in and let the thread pool settle.
  {
    auto t = random_tokens(16);
    (void)c.eval(t, 0);
    c.clear(0);
  }

  double pp = 0, tg = 0;
  if (!skip_pp) {
    std::vector<double> runs;
    for (int r = 0; r < reps; ++r) {
      auto t = random_tokens(512);
      c.clear(0);
      auto t0 = Clock::now();
      if (auto res = c.eval(t, 0); !res.ok()) {
        std::fprintf(stderr, "pp512: %s\n", res.error().msg.c_str());
        return 1;
      }
      runs.push_back(512 / seconds_since(t0));
    }
    pp = median(runs);
    std::printf("pp512   %8.1f tokens/s\n", pp);
  }
  double pp_depth = 0;
  if (depth > 0) {
    std::vector<double> runs;
    for (int r = 0; r < reps; ++r) {
      c.clear(0);
      if (auto res = c.eval(random_tokens(depth), 0); !res.ok()) {
        std::fprintf(stderr, "depth %d: %s\n", depth, res.error().msg.c_str());
        return 1;
      }
      auto t = random_tokens(512);
      auto t0 = Clock::now();
      if (auto res = c.eval(t, 0); !res.ok()) return 1;
      runs.push_back(512 / seconds_since(t0));
    }
    pp_depth = median(runs);
    std::printf("pp512@d%d %8.1f tokens/s\n", depth, pp_depth);
  }
  if (!skip_tg) {
    std::vector<double> runs;
    for (int r = 0; r < reps; ++r) {
      c.clear(0);
      auto first = random_tokens(1);
      if (auto res = c.eval(first, 0); !res.ok()) return 1;
      auto t0 = Clock::now();
      for (int i = 0; i < n_gen; ++i) {
        int32_t id = pick(rng);
        if (auto res = c.eval(std::span<const int32_t>(&id, 1), 0); !res.ok()) {
          std::fprintf(stderr, "tg128: %s\n", res.error().msg.c_str());
          return 1;
        }
      }
      runs.push_back(n_gen / seconds_since(t0));
    }
    tg = median(runs);
    std::printf("tg%-5d %8.1f tokens/s\n", n_gen, tg);
  }

  double tg_par = 0;
  if (parallel > 0) {
    std::vector<double> runs;
    std::vector<BatchEntry> batch(static_cast<size_t>(parallel));
    for (int r = 0; r < reps; ++r) {
      for (int s = 0; s < parallel; ++s) {
        c.clear(s);
        if (auto res = c.eval(random_tokens(1), s); !res.ok()) return 1;
      }
      auto t0 = Clock::now();
      for (int i = 0; i < n_gen; ++i) {
        for (int s = 0; s < parallel; ++s)
          batch[static_cast<size_t>(s)] = BatchEntry{pick(rng), c.n_pos(s), s, true};
        if (auto res = c.decode(batch); !res.ok()) {
          std::fprintf(stderr, "tg×%d: %s\n", parallel, res.error().msg.c_str());
          return 1;
        }
      }
      runs.push_back(double(n_gen) * parallel / seconds_since(t0));
    }
    for (int s = 0; s < parallel; ++s) c.clear(s);
    tg_par = median(runs);
    std::printf("tg%d×%d %8.1f tokens/s in all\n", n_gen, parallel, tg_par);
  }

  // Time to first token: a fresh session (no cached prefix), a 300-token prompt, greedy.
  std::vector<double> ttfts;
  for (int r = 0; r < (skip_ttft ? 0 : reps); ++r) {
    c.clear(0);
    Session s(c, *tok, 0);
    Options o = greedy_options();
    o.num_predict = 1;
    o.num_ctx = 1024;
    auto prompt = random_tokens(300);
    auto t0 = Clock::now();
    double ttft = 0;
    auto res = s.generate(prompt, o, [&](const TokenEvent& ev) {
      if (ev.token >= 0 && ttft == 0) ttft = seconds_since(t0);
      return true;
    });
    if (!res.ok()) {
      std::fprintf(stderr, "ttft: %s\n", res.error().msg.c_str());
      return 1;
    }
    if (ttft == 0) ttft = seconds_since(t0);  // the first token was an end-of-generation id
    ttfts.push_back(ttft);
  }
  const double ttft = ttfts.empty() ? 0.0 : median(ttfts);
  const long rss = peak_rss_kib();
  std::printf("ttft300 %8.1f ms\n", ttft * 1000);
  std::printf("peak RSS %.1f MiB (file %.1f MiB)\n", static_cast<double>(rss) / 1024,
              static_cast<double>((*model)->file_size()) / (1 << 20));
  if (json)
    std::printf("{\"engine\":\"nurllama\",\"model\":\"%s\",\"threads\":%d,\"pp512\":%.2f,\"tg\":%.2f,\"n_gen\":%d,"
                "\"pp512_depth\":%.2f,\"depth\":%d,\"tg_parallel\":%.2f,\"parallel\":%d,\"ttft300_ms\":%.1f,\"peak_rss_mib\":%.1f,\"load_s\":%.2f}\n",
                path.c_str(), threads, pp, tg, n_gen, pp_depth, depth, tg_par, parallel, ttft * 1000, static_cast<double>(rss) / 1024, load_s);
  return 0;
}

}  // namespace
}  // namespace nurl

int main(int argc, char** argv) { return nurl::run(argc, argv); }
