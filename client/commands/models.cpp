// Store and residency commands: list/ls, ps, show, rm, cp, stop, verify. Each is one request to
// the daemon, printed as a table or as the daemon's text.
#include <ctime>

#include "client/context.h"
#include "client/format.h"
#include "core/json-text.h"

namespace nurl::client {

namespace {

std::string short_digest(const std::string& d) {
  std::string hex = d.rfind("sha256:", 0) == 0 ? d.substr(7) : d;
  return hex.substr(0, 12);
}

int64_t now_s() { return int64_t(std::time(nullptr)); }

void list_models(Context& ctx) {
  auto j = ctx.call("GET", "/api/tags");
  if (j.is_null()) return;
  std::vector<std::vector<std::string>> rows{{"NAME", "ID", "SIZE", "MODIFIED"}};
  for (const auto& m : j.value("models", nlohmann::json::array())) {
    rows.push_back({m.value("name", ""), short_digest(m.value("digest", "")), human_bytes(m.value("size", uint64_t(0))),
                    human_ago(parse_rfc3339(m.value("modified_at", "")), now_s())});
  }
  std::fputs(render_table(rows).c_str(), stdout);
}

void list_running(Context& ctx) {
  auto j = ctx.call("GET", "/api/ps");
  if (j.is_null()) return;
  std::vector<std::vector<std::string>> rows{{"NAME", "ID", "SIZE", "PROCESSOR", "CONTEXT", "UNTIL"}};
  for (const auto& m : j.value("models", nlohmann::json::array())) {
    uint64_t size = m.value("size", uint64_t(0)), vram = m.value("size_vram", uint64_t(0));
    std::string proc = vram == 0 ? "100% CPU" : vram >= size ? "100% GPU"
                                          : std::to_string(100 - vram * 100 / size) + "%/" +
                                                std::to_string(vram * 100 / size) + "% CPU/GPU";
    rows.push_back({m.value("name", ""), short_digest(m.value("digest", "")), human_bytes(size), proc,
                    std::to_string(m.value("context_length", 0)),
                    human_until(parse_rfc3339(m.value("expires_at", "")), now_s())});
  }
  std::fputs(render_table(rows).c_str(), stdout);
}

struct ShowFlags {
  std::string model;
  bool modelfile = false, parameters = false, tmpl = false, system = false, license = false, verbose = false;
};

std::string scalar_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) return "[" + std::to_string(v.size()) + " items]";
  return dump_json(v);
}

void show_model(Context& ctx, const ShowFlags& f) {
  nlohmann::json req{{"model", Context::model_ref(f.model)}};
  if (f.verbose) req["verbose"] = true;
  auto j = ctx.call("POST", "/api/show", req);
  if (j.is_null()) return;
  auto text = [&](const char* k) { return j.value(k, std::string()); };
  if (f.modelfile) return (void)std::fputs(text("modelfile").c_str(), stdout);
  if (f.parameters) return (void)std::printf("%s\n", text("parameters").c_str());
  if (f.tmpl) return (void)std::printf("%s\n", text("template").c_str());
  if (f.system) return (void)std::printf("%s\n", text("system").c_str());
  if (f.license) return (void)std::printf("%s\n", text("license").c_str());

  auto d = j.value("details", nlohmann::json::object());
  auto info = j.value("model_info", nlohmann::json::object());
  std::string arch = info.value("general.architecture", d.value("family", ""));
  auto key = [&](const std::string& k) { return info.contains(arch + "." + k) ? scalar_text(info[arch + "." + k]) : ""; };
  std::vector<std::vector<std::string>> model_rows{
      {"architecture", arch},
      {"parameters", d.value("parameter_size", "")},
      {"context length", key("context_length")},
      {"embedding length", key("embedding_length")},
      {"quantization", d.value("quantization_level", "")}};
  std::printf("  Model\n");
  for (auto& line : model_rows)
    if (!line[1].empty()) std::printf("    %-20s%s\n", line[0].c_str(), line[1].c_str());
  if (j.contains("capabilities") && j["capabilities"].is_array() && !j["capabilities"].empty()) {
    std::printf("\n  Capabilities\n");
    for (auto& c : j["capabilities"]) std::printf("    %s\n", scalar_text(c).c_str());
  }
  if (!text("parameters").empty()) {
    std::printf("\n  Parameters\n");
    std::string p = text("parameters");
    size_t pos = 0;
    while (pos < p.size()) {
      size_t e = p.find('\n', pos);
      if (e == std::string::npos) e = p.size();
      std::printf("    %s\n", p.substr(pos, e - pos).c_str());
      pos = e + 1;
    }
  }
  if (!text("system").empty()) std::printf("\n  System\n    %s\n", text("system").c_str());
  if (f.verbose) {
    std::printf("\n  Metadata\n");
    for (auto& [k, v] : info.items()) std::printf("    %-40s %s\n", k.c_str(), scalar_text(v).c_str());
    if (j.contains("tensors")) {
      std::printf("\n  Tensors\n");
      for (auto& t : j["tensors"]) {
        std::string shape;
        for (auto& s : t.value("shape", nlohmann::json::array())) shape += (shape.empty() ? "" : ", ") + dump_json(s);
        std::printf("    %-40s %-6s [%s]\n", t.value("name", "").c_str(), t.value("type", "").c_str(), shape.c_str());
      }
    }
  }
  std::printf("\n");
}

}  // namespace

void add_model_commands(CLI::App& app, Context& ctx) {
  auto* list = app.add_subcommand("list", "List models in the store");
  list->alias("ls");
  list->callback([&ctx] { list_models(ctx); });

  app.add_subcommand("ps", "List models loaded in memory")->callback([&ctx] { list_running(ctx); });

  auto sf = std::make_shared<ShowFlags>();
  auto* show = app.add_subcommand("show", "Show information about a model");
  show->add_option("model", sf->model)->required();
  show->add_flag("--modelfile", sf->modelfile, "Show the Modelfile");
  show->add_flag("--parameters", sf->parameters, "Show the parameters");
  show->add_flag("--template", sf->tmpl, "Show the chat template");
  show->add_flag("--system", sf->system, "Show the system message");
  show->add_flag("--license", sf->license, "Show the license");
  show->add_flag("-v,--verbose", sf->verbose, "Show all metadata and the tensors");
  show->callback([&ctx, sf] { show_model(ctx, *sf); });

  auto rm_names = std::make_shared<std::vector<std::string>>();
  auto* rm = app.add_subcommand("rm", "Remove models from the store");
  rm->add_option("models", *rm_names)->required();
  rm->callback([&ctx, rm_names] {
    for (const auto& n : *rm_names) {
      if (!ctx.call("DELETE", "/api/delete", nlohmann::json{{"model", n}}).is_null()) std::printf("deleted '%s'\n", n.c_str());
    }
  });

  auto cp_args = std::make_shared<std::pair<std::string, std::string>>();
  auto* cp = app.add_subcommand("cp", "Copy a model under a new name");
  cp->add_option("source", cp_args->first)->required();
  cp->add_option("destination", cp_args->second)->required();
  cp->callback([&ctx, cp_args] {
    auto j = ctx.call("POST", "/api/copy", nlohmann::json{{"source", cp_args->first}, {"destination", cp_args->second}});
    if (!j.is_null()) std::printf("copied '%s' to '%s'\n", cp_args->first.c_str(), cp_args->second.c_str());
  });

  auto stop_model = std::make_shared<std::string>();
  auto* stop = app.add_subcommand("stop", "Unload a running model");
  stop->add_option("model", *stop_model)->required();
  stop->callback([&ctx, stop_model] {
    ctx.call("POST", "/api/generate",
             nlohmann::json{{"model", Context::model_ref(*stop_model)}, {"keep_alive", 0}, {"stream", false}});
  });

  auto verify_model = std::make_shared<std::string>();
  auto* verify = app.add_subcommand("verify", "Re-hash a model's file and report any drift");
  verify->add_option("model", *verify_model)->required();
  verify->callback([&ctx, verify_model] {
    auto j = ctx.call("POST", "/api/verify", nlohmann::json{{"model", *verify_model}});
    if (j.is_null()) return;
    bool ok = j.value("ok", false);
    std::printf("%s: %s\n", verify_model->c_str(), ok ? "ok" : "CORRUPT");
    if (j.contains("expected")) std::printf("  expected %s\n", j["expected"].get<std::string>().c_str());
    if (j.contains("actual")) std::printf("  actual   %s\n", j["actual"].get<std::string>().c_str());
    if (!ok) ctx.exit_code = 1;
  });
}

}  // namespace nurl::client
