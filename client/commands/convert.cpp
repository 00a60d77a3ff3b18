// `convert HF_DIR [--name N] [--type T] [-o OUT.gguf]` and `quantize IN OUT TYPE`: jobs on the
// daemon's queue, followed with progress bars (Ctrl+C leaves them running; see `jobs`).
// convert imports into the store by default (over TCP: the checkpoint is uploaded and made with
// /api/create); -o and quantize write files, which needs the Unix socket (the daemon checks this
// user may read the input and write the output).
#include <filesystem>

#include "api/model-name.h"
#include "client/context.h"

namespace nurl::client {

namespace fs = std::filesystem;

namespace {

std::string absolute(const std::string& p) {
  std::error_code ec;
  return fs::absolute(p, ec).lexically_normal().string();
}

bool need_socket(Context& ctx, const std::string& what) {
  if (!ctx.http->endpoint().unix_socket.empty()) return true;
  ctx.fail(what + " writes a file on the daemon's machine, which needs the daemon's Unix socket (unset NURLLAMA_HOST); "
                  "over TCP use `nurllama convert DIR --name N` or `nurllama create NAME --quantize TYPE`");
  return false;
}

struct ConvertFlags {
  std::string dir, name, type = "q8_0", output;
  int threads = 0;
};

void convert(Context& ctx, const ConvertFlags& f) {
  std::error_code ec;
  if (!fs::is_directory(f.dir, ec)) return ctx.fail(f.dir + ": not a directory (a Hugging Face checkpoint)");
  std::string name = f.name;
  if (name.empty() && f.output.empty()) {
    fs::path d = fs::path(absolute(f.dir));
    name = sanitize_model_segment(d.filename().string());
  }
  if (!f.output.empty() && !need_socket(ctx, "-o")) return;
  if (ctx.http->endpoint().unix_socket.empty()) {
    auto list = checkpoint_files(f.dir);
    if (!list.ok()) return ctx.fail(list.error());
    auto files = upload_blobs(ctx, *list);
    if (!files.ok()) return ctx.fail(files.error());
    stream_progress(ctx, "POST", "/api/create", {{"model", name}, {"files", *files}, {"quantize", f.type}});
    return;
  }
  nlohmann::json body{{"kind", "convert"}, {"source", absolute(f.dir)}, {"type", f.type}};
  if (!f.output.empty()) body["output"] = absolute(f.output);
  else body["name"] = name;
  if (f.threads > 0) body["threads"] = f.threads;
  if (stream_progress(ctx, "POST", "/api/jobs", body))
    std::printf("%s\n", f.output.empty() ? name.c_str() : absolute(f.output).c_str());
}

struct QuantizeFlags {
  std::string in, out, type;
  int threads = 0;
};

void quantize(Context& ctx, const QuantizeFlags& f) {
  if (!need_socket(ctx, "quantize")) return;
  nlohmann::json body{{"kind", "quantize"}, {"type", f.type}, {"output", absolute(f.out)}};
  std::error_code ec;
  if (fs::is_regular_file(f.in, ec)) body["source"] = absolute(f.in);
  else body["model"] = f.in;  // a model in the store
  if (f.threads > 0) body["threads"] = f.threads;
  if (stream_progress(ctx, "POST", "/api/jobs", body)) std::printf("%s\n", absolute(f.out).c_str());
}

}  // namespace

void add_convert_commands(CLI::App& app, Context& ctx) {
  auto cf = std::make_shared<ConvertFlags>();
  auto* c = app.add_subcommand("convert", "Convert a Hugging Face checkpoint directory to GGUF (into the store, or -o a file)");
  c->add_option("dir", cf->dir, "Checkpoint directory (config.json, tokenizer, *.safetensors)")->required();
  c->add_option("--name", cf->name, "Model name in the store (default: the directory's name)");
  c->add_option("--type", cf->type, "Output type: f32, f16, bf16, q8_0 (default) or a quantisation (Q4_K_M, ...)");
  c->add_option("-o,--output", cf->output, "Write this GGUF file instead of importing into the store");
  c->add_option("--threads", cf->threads, "Threads for the job (capped by the daemon's job_threads)");
  c->callback([&ctx, cf] { convert(ctx, *cf); });

  auto qf = std::make_shared<QuantizeFlags>();
  auto* q = app.add_subcommand("quantize", "Quantise a GGUF file (or a model in the store) into a GGUF file");
  q->add_option("in", qf->in, "Input .gguf file or model name")->required();
  q->add_option("out", qf->out, "Output .gguf file")->required();
  q->add_option("type", qf->type, "Q4_K_M, Q5_K_M, Q8_0, Q6_K, F16, ...")->required();
  q->add_option("--threads", qf->threads, "Threads for the job (capped by the daemon's job_threads)");
  q->callback([&ctx, qf] { quantize(ctx, *qf); });
}

}  // namespace nurl::client
