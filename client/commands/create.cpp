// `create NAME -f Modelfile`: FROM a local .gguf (hashed here, uploaded to /api/blobs only when
// the daemon lacks it) or FROM an existing model; SYSTEM, TEMPLATE and PARAMETER become
// /api/create's structured fields.
#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "client/context.h"
#include "client/modelfile.h"
#include "client/progress.h"

namespace nurl::client {

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

void create_model(Context& ctx, const std::string& name, const std::string& file) {
  namespace fs = std::filesystem;
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
  if (fs::is_regular_file(from, ec)) {
    auto digest = sha256_file(from.string());
    if (!digest.ok()) return ctx.fail(digest.error());
    auto head = ctx.http->request("HEAD", "/api/blobs/" + *digest);
    if (!head.ok()) return ctx.fail(head.error());
    if (head->status != 200) {
      std::fprintf(stderr, "uploading %s\n", from.filename().c_str());
      auto up = ctx.http->upload("/api/blobs/" + *digest, from.string());
      if (!up.ok()) return ctx.fail(up.error());
      if (up->status >= 300) return ctx.fail(error_text(*up));
    }
    body["files"] = {{from.filename().string(), *digest}};
  } else {
    body["from"] = mf->from;
  }
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
  ProgressPrinter progress(stderr, ctx.stderr_tty);
  std::string err;
  auto r = ctx.http->stream("POST", "/api/create", body, [&](const nlohmann::json& ev) {
    if (ev.contains("error")) {
      err = ev["error"].is_string() ? ev["error"].get<std::string>() : ev["error"].dump();
      return false;
    }
    progress.on_event(ev);
    return true;
  });
  progress.finish();
  if (!err.empty()) return ctx.fail(err);
  if (!r.ok()) return ctx.fail(r.error());
}

}  // namespace

void add_create_command(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<std::pair<std::string, std::string>>("", "Modelfile");
  auto* create = app.add_subcommand("create", "Create a model from a Modelfile");
  create->add_option("name", args->first)->required();
  create->add_option("-f,--file", args->second, "Path to the Modelfile");
  create->callback([&ctx, args] { create_model(ctx, args->first, args->second); });
}

}  // namespace nurl::client
