// nurl-convert-bench: speed and memory of checkpoint conversion and of quantisation.
//   convert HF_DIR [--type T] [--threads N]
//       one conversion to a temporary file: checkpoint bytes, seconds, MB/s (checkpoint bytes per
//       second), output bytes, and the process's peak RSS against the checkpoint's size
//   quantize IN.gguf [--types Q8_0,Q4_K_M,...] [--threads N] [--reps R]
//       per type: the median of R runs, MB/s of f32-equivalent weights (4 bytes per element of the
//       tensors re-encoded), output bytes
// Run it on a quiet machine, or read its figures as noisy; it is never run as a test.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "engine/convert/checkpoint.h"
#include "engine/convert/convert.h"
#include "engine/gguf/gguf.h"
#include "engine/quant/quantize-model.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int usage() {
  std::fprintf(stderr,
               "usage: nurl-convert-bench convert HF_DIR [--type T] [--threads N]\n"
               "       nurl-convert-bench quantize IN.gguf [--types A,B,...] [--threads N] [--reps R]\n");
  return 2;
}

fs::path temp_out() { return fs::temp_directory_path() / ("nurl-convert-bench-" + std::to_string(getpid()) + ".gguf"); }

int bench_convert(const std::string& dir, const std::string& type, int threads) {
  auto ck = convert::Checkpoint::open(dir);
  if (!ck.ok()) {
    std::fprintf(stderr, "%s\n", ck.error().msg.c_str());
    return 1;
  }
  const uint64_t bytes = ck->weight_bytes();
  const long rss_before = peak_rss_kib();
  const fs::path out = temp_out();
  convert::ConvertOptions o;
  o.out_type = type;
  o.threads = threads;
  const auto t0 = Clock::now();
  auto r = convert::convert_checkpoint(dir, out, o);
  const double s = seconds_since(t0);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.error().msg.c_str());
    return 1;
  }
  std::error_code ec;
  const uint64_t out_bytes = fs::file_size(out, ec);
  fs::remove(out, ec);
  const long rss = peak_rss_kib();
  std::printf("convert %s → %s, %d threads: checkpoint %.1f MB in %.2f s = %.1f MB/s; output %.1f MB; peak RSS %.1f MiB "
              "(%.1f MiB before; %.0f%% of the checkpoint)\n",
              dir.c_str(), type.c_str(), threads, double(bytes) / 1e6, s, double(bytes) / 1e6 / s, double(out_bytes) / 1e6,
              double(rss) / 1024, double(rss_before) / 1024, 100.0 * double(rss) * 1024 / double(bytes));
  return 0;
}

int bench_quantize(const std::string& in, const std::string& types, int threads, int reps) {
  auto f = gguf::File::open(in);
  if (!f.ok()) {
    std::fprintf(stderr, "%s\n", f.error().msg.c_str());
    return 1;
  }
  uint64_t elems = 0;
  for (const auto& t : f->tensors())
    if (t.n_dims >= 2) elems += t.n_elements;
  std::stringstream ss(types);
  std::string type;
  const fs::path out = temp_out();
  while (std::getline(ss, type, ',')) {
    std::vector<double> times;
    uint64_t out_bytes = 0;
    for (int i = 0; i < reps; ++i) {
      quant::QuantizeOptions o;
      o.type = type;
      o.threads = threads;
      const auto t0 = Clock::now();
      auto r = quant::quantize_model(in, out, o);
      times.push_back(seconds_since(t0));
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.error().msg.c_str());
        return 1;
      }
      std::error_code ec;
      out_bytes = fs::file_size(out, ec);
      fs::remove(out, ec);
    }
    std::sort(times.begin(), times.end());
    const double s = times[times.size() / 2];
    std::printf("quantize %-7s %d threads: median %.3f s of %d = %.1f MB/s of f32 weights (%.1f M weights); output %.1f MB\n",
                type.c_str(), threads, s, reps, double(elems) * 4 / 1e6 / s, double(elems) / 1e6, double(out_bytes) / 1e6);
  }
  return 0;
}

int run(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string cmd = argv[1], path = argv[2];
  std::string type = "q8_0", types = "Q8_0,Q4_0,Q4_K_M,Q5_K_M,Q6_K,Q3_K_M,Q2_K";
  int threads = 1, reps = 3;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--type") type = v;
    else if (k == "--types") types = v;
    else if (k == "--threads") threads = std::stoi(v);
    else if (k == "--reps") reps = std::max(1, std::stoi(v));
    else return usage();
  }
  if (cmd == "convert") return bench_convert(path, type, threads);
  if (cmd == "quantize") return bench_quantize(path, types, threads, reps);
  return usage();
}

}  // namespace
}  // namespace nurl

int main(int argc, char** argv) { return nurl::run(argc, argv); }
