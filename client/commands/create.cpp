// `create NAME [-f Modelfile] [--quantize TYPE]`: FROM a local .gguf or a Hugging Face checkpoint
// directory, or FROM an existing model; SYSTEM, TEMPLATE and PARAMETER become /api/create's
// structured fields. Over the Unix socket the daemon is handed the path (it checks this user may
// read it and imports without an upload); over TCP the files are hashed here and uploaded to
// /api/blobs (streamed; only those the daemon lacks).
#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "client/context.h"
#include "client/modelfile.h"

namespace nurl::client {

namespace fs = std::filesystem;

namespace {

Result<std::string> sha256_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error(Code::not_found, path + ": cannot open");
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  EVP_DigestInit_ex(md, EVP_sha256(), nullptr);
  std::vector<unsigned char> buf(1 << 20);
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) EVP_DigestUpdate(md, buf.data(), n);
  bool err = std::ferror(f);
  std::fclose(f);
  unsigned char out[32];
  unsigned len = 0;
  EVP_DigestFinal_ex(md, out, &len);
  EVP_MD_CTX_free(md);
  if (err) return Error(Code::io, path + ": read error");
  static const char* kHex = "0123456789abcdef";
  std::string hex = "sha256:";
  for (unsigned i = 0; i < len; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 15];
  }
  return hex;
}

void create_model(Context& ctx, const std::string& name, const std::string& file, const std::string& quantize) {
  std::ifstream in(file);
  if (!in) return ctx.fail("cannot read " + file);
  std::stringstream ss;
  ss << in.rdbuf();
  auto mf = parse_modelfile(ss.str());
  if (!mf.ok()) return ctx.fail(mf.error());
  nlohmann::json body{{"model", name}, {"stream", true}};
  // FROM: a path relative to the Modelfile, or a model name.
  fs::path from = mf->from;
  if (from.is_relative()) from = fs::path(file).parent_path() / from;
  std::error_code ec;
  const bool is_file = fs::is_regular_file(from, ec), is_dir = !is_file && fs::is_directory(from, ec);
  if ((is_file || is_dir) && !ctx.http->endpoint().unix_socket.empty()) {
    body["from"] = fs::absolute(from, ec).lexically_normal().string();
  } else if (is_file) {
    auto files = upload_blobs(ctx, {from});
    if (!files.ok()) return ctx.fail(files.error());
    body["files"] = *files;
  } else if (is_dir) {
    auto list = checkpoint_files(from);
    if (!list.ok()) return ctx.fail(list.error());
    auto files = upload_blobs(ctx, *list);
    if (!files.ok()) return ctx.fail(files.error());
    body["files"] = *files;
  } else if (mf->from.rfind("/", 0) == 0 || mf->from.rfind("./", 0) == 0 || mf->from.rfind("../", 0) == 0) {
    return ctx.fail("FROM " + mf->from + ": no such file or directory (" + from.string() + ")");
  } else {
    body["from"] = mf->from;
  }
  if (!quantize.empty()) body["quantize"] = quantize;
  if (mf->has_system) body["system"] = mf->system;
  if (mf->has_template) body["template"] = mf->tmpl;
  if (!mf->parameters.empty()) {
    auto p = parameters_json(mf->parameters);
    if (!p.ok()) return ctx.fail(p.error());
    body["parameters"] = *p;
  }
  if (!mf->license.empty()) body["license"] = mf->license;
  if (!mf->messages.empty()) {
    for (auto& [role, content] : mf->messages) body["messages"].push_back({{"role", role}, {"content", content}});
  }
  stream_progress(ctx, "POST", "/api/create", body);
}

}  // namespace

Result<std::vector<fs::path>> checkpoint_files(const fs::path& dir) {
  std::vector<fs::path> out;
  bool weights = false;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string n = it->path().filename().string();
    bool take = n.ends_with(".safetensors") || n.ends_with(".json") || n == "tokenizer.model";
    if (!take) continue;
    weights |= n.ends_with(".safetensors");
    out.push_back(it->path());
  }
  if (ec) return Error(Code::io, dir.string() + ": " + ec.message());
  if (!weights) return Error(Code::invalid_argument, dir.string() + ": no .safetensors files (not a checkpoint directory)");
  std::sort(out.begin(), out.end());
  return out;
}

Result<nlohmann::json> upload_blobs(Context& ctx, const std::vector<fs::path>& files) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : files) {
    NURL_ASSIGN(std::string digest, sha256_file(f.string()));
    NURL_ASSIGN(auto head, ctx.http->request("HEAD", "/api/blobs/" + digest));
    if (head.status != 200) {
      std::fprintf(stderr, "uploading %s\n", f.filename().c_str());
      NURL_ASSIGN(auto up, ctx.http->upload("/api/blobs/" + digest, f.string()));
      if (up.status >= 300) return Error(Code::io, f.filename().string() + ": " + error_text(up));
    }
    out[f.filename().string()] = digest;
  }
  return out;
}

void add_create_command(CLI::App& app, Context& ctx) {
  struct Flags {
    std::string name, file = "Modelfile", quantize;
  };
  auto f = std::make_shared<Flags>();
  auto* create = app.add_subcommand("create", "Create a model from a Modelfile (FROM a .gguf, a checkpoint directory or a model)");
  create->add_option("name", f->name)->required();
  create->add_option("-f,--file", f->file, "Path to the Modelfile");
  create->add_option("-q,--quantize", f->quantize, "Quantise the model (Q4_K_M, Q8_0, ...)");
  create->callback([&ctx, f] { create_model(ctx, f->name, f->file, f->quantize); });
}

}  // namespace nurl::client
