#include "routes/show.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unordered_set>

#include "api/json-fields.h"
#include "api/ollama.h"
#include "core/json-text.h"
#include "engine/chat/reply-format.h"
#include "engine/gguf/gguf.h"
#include "routes/fill-in-middle.h"
#include "scheduler/scheduler.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace {

// Whether the vocabulary holds one of the FIM token families (routes/fill-in-middle.h).
bool has_fim_tokens(const gguf::File& f) {
  auto tokens = f.get_array("tokenizer.ggml.tokens");
  if (!tokens.ok()) return false;
  std::unordered_set<std::string_view> vocab;
  for (const auto& v : (*tokens)->items)
    if (const auto* t = v.get_if<std::string>()) vocab.insert(*t);
  return find_fim([&](std::string_view t) { return vocab.contains(t); }) != nullptr;
}

using api::Json;


Json value_json(const gguf::Value& v, bool verbose) {
  using gguf::ValueType;
  switch (v.type()) {
    case ValueType::string: return *v.get_if<std::string>();
    case ValueType::boolean: return *v.get_if<bool>();
    case ValueType::f32: return *v.get_if<float>();
    case ValueType::f64: return *v.get_if<double>();
    case ValueType::array: {
      // Large arrays (vocabularies) only when verbose, as ollama does.
      if (!verbose) return nullptr;
      Json a = Json::array();
      for (const auto& x : v.get_if<gguf::Array>()->items) a.push_back(value_json(x, true));
      return a;
    }
    default:
      if (auto i = v.as_int()) return *i;
      return nullptr;
  }
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string parameter_size(uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.1fB", n / 1e9);
  else if (n >= 1000000ull) std::snprintf(buf, sizeof buf, "%.2fM", n / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2fK", n / 1e3);
  return buf;
}

// ollama's file_type names (llama.cpp's LLAMA_FTYPE numbering).
std::string file_type_name(int64_t t) {
  static const char* kNames[] = {"F32",    "F16",    "Q4_0",   "Q4_1",   "Q4_1_F16", "Q4_2",   "Q4_3",
                                 "Q8_0",   "Q5_0",   "Q5_1",   "Q2_K",   "Q3_K_S",   "Q3_K_M", "Q3_K_L",
                                 "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",     "IQ2_XXS", "IQ2_XS",
                                 "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL",   "IQ3_S",  "IQ3_M",
                                 "IQ2_S",  "IQ2_M",  "IQ4_XS", "IQ1_M",  "BF16"};
  if (t >= 0 && t < static_cast<int64_t>(sizeof kNames / sizeof kNames[0])) return kNames[t];
  return "unknown";
}

// Details shared by show and ps: family, parameter size, quantisation level.
Json details_of(const gguf::File& f, uint64_t* n_params_out) {
  auto arch_r = f.get_string_or("general.architecture", "");
  std::string arch = arch_r.ok() ? *arch_r : "";
  uint64_t n_params = 0;
  for (const auto& t : f.tensors()) n_params += t.n_elements;
  if (n_params_out) *n_params_out = n_params;
  std::string quant = "unknown";
  if (const auto* ft = f.find("general.file_type"))
    if (auto i = ft->as_int()) quant = file_type_name(*i);
  return Json{{"parent_model", ""},
              {"format", "gguf"},
              {"family", arch},
              {"families", Json::array({arch})},
              {"parameter_size", parameter_size(n_params)},
              {"quantization_level", quant}};
}

std::string parameters_text(const api::Options& o) {
  std::string out;
  Json j = o.to_json();
  for (const auto& [k, v] : j.items()) {
    if (v.is_array()) {
      for (const auto& s : v) out += k + " " + dump_json(s) + "\n";
    } else {
      out += k + " " + dump_json(v) + "\n";
    }
  }
  return out;
}

http::Reply show(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::parse_show_request(req.body);
  if (!parsed.ok()) return http::error_response(parsed.error());
  auto cfg = ctx.config.get();
  auto m = resolve_model(parsed->model, req.peer, cfg->allow_model_paths, ctx.store_resolve);
  if (!m.ok()) return http::error_response(m.error());
  auto f = gguf::File::open(m->path);
  if (!f.ok()) return http::error_response(500, f.error().msg);

  uint64_t n_params = 0;
  Json details = details_of(*f, &n_params);
  Json info = Json::object();
  for (const auto& kv : f->metadata()) info[kv.key] = value_json(kv.value, parsed->verbose);
  info["general.parameter_count"] = n_params;

  std::string tmpl = m->template_override;
  if (tmpl.empty()) {
    auto t = f->get_string_or("tokenizer.chat_template", "");
    if (t.ok()) tmpl = *t;
  }
  // What the model can do, from its template: tool calls and reasoning in a format we parse,
  // fill-in-the-middle when the template reads a suffix or the vocabulary has FIM tokens.
  Json caps = Json::array({"completion"});
  std::string arch = details["family"].get<std::string>();
  if (f->has(arch + ".pooling_type")) caps.push_back("embedding");
  const chat::ReplyFormat reply = chat::detect_reply_format(tmpl);
  if (reply.can_call_tools()) caps.push_back("tools");
  if (reply.can_think()) caps.push_back("thinking");
  if (reply.uses_suffix || has_fim_tokens(*f)) caps.push_back("insert");

  std::string modelfile = "# Modelfile generated by \"nurllama show\"\nFROM " + m->path + "\n";
  if (!tmpl.empty()) modelfile += "TEMPLATE \"\"\"" + tmpl + "\"\"\"\n";
  if (!m->system.empty()) modelfile += "SYSTEM \"\"\"" + m->system + "\"\"\"\n";
  std::string params = parameters_text(m->defaults);
  for (size_t i = 0; i < params.size();) {
    size_t j = params.find('\n', i);
    modelfile += "PARAMETER " + params.substr(i, j - i) + "\n";
    i = j + 1;
  }

  Json out{{"modelfile", modelfile},
           {"parameters", params},
           {"template", tmpl},
           {"details", details},
           {"model_info", info},
           {"capabilities", caps},
           {"modified_at", api::format_time(m->modified_at)}};
  if (!m->system.empty()) out["system"] = m->system;
  if (parsed->verbose) {
    Json tensors = Json::array();
    for (const auto& t : f->tensors()) {
      Json shape = Json::array();
      for (uint32_t d = 0; d < t.n_dims; ++d) shape.push_back(t.ne[d]);
      tensors.push_back({{"name", t.name}, {"type", upper(type_name(t.type))}, {"shape", shape}});
    }
    out["tensors"] = tensors;
  }
  return http::json_response(200, api::dump(out));
}

// The digest /api/tags shows (hex, no "sha256:") when the file is one of the store's blobs.
std::string blob_digest(const RouteContext& ctx, const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  if (!ctx.store || !name.starts_with("sha256-")) return "";
  const std::string digest = "sha256:" + name.substr(7);
  if (!digest_hex(digest).ok() || ctx.store->blob_path(digest) != std::filesystem::path(path)) return "";
  return name.substr(7);
}

http::Reply ps(RouteContext& ctx) {
  Json models = Json::array();
  if (ctx.scheduler) {
    for (const auto& r : ctx.scheduler->resident()) {
      Json details = Json::object();
      if (auto f = gguf::File::open(r.spec.path); f.ok()) details = details_of(*f, nullptr);
      auto expires = r.forever ? std::chrono::system_clock::time_point(std::chrono::hours(24 * 365 * 300))
                               : r.expires_at;
      models.push_back({{"name", r.name},
                        {"model", r.name},
                        {"size", r.size_bytes},
                        {"digest", blob_digest(ctx, r.spec.path)},
                        {"details", details},
                        {"expires_at", api::format_time(expires)},
                        {"size_vram", 0},
                        {"context_length", r.spec.n_ctx},
                        // Added field (not in ollama): requests queued or running on it now.
                        {"active_requests", r.active}});
    }
  }
  return http::json_response(200, api::dump(Json{{"models", models}}));
}

}  // namespace

void add_show_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/api/show", [&ctx](const http::Request& req) { return show(ctx, req); });
  r.add("GET", "/api/ps", [&ctx](const http::Request&) { return ps(ctx); });
}

}  // namespace nurl
