// Inspection taps, machine-readable: `tokenize` prints the ids as one JSON array, `detok` the raw
// bytes, `vocab` one "id<TAB>type<TAB>piece" line per token (the piece as the GGUF stores it,
// e.g. "▁the" or "<0x0A>", so every token is one line), `logits` the final-position logits
// one per line (full precision, so they can be compared against other engines).
#include <cstdio>

#include "client/context.h"
#include "core/json-text.h"

namespace nurl::client {

void add_inspect_commands(CLI::App& app, Context& ctx) {
  struct Args {
    std::string model, text;
    std::vector<std::string> ids;
    bool no_special = false;
  };
  auto a = std::make_shared<Args>();

  auto* tok = app.add_subcommand("tokenize", "Print the token ids of TEXT as a JSON array");
  tok->add_option("model", a->model)->required();
  tok->add_option("text", a->text)->required();
  tok->add_flag("--no-parse-special", a->no_special, "Treat special-token text as plain text");
  tok->callback([&ctx, a] {
    nlohmann::json req{{"model", Context::model_ref(a->model)}, {"content", a->text}};
    if (a->no_special) req["parse_special"] = false;
    auto j = ctx.call("POST", "/api/tokenize", req);
    if (!j.is_null()) std::printf("%s\n", dump_json(j.value("tokens", nlohmann::json::array())).c_str());
  });

  auto* detok = app.add_subcommand("detok", "Print the bytes of token ids");
  detok->add_option("model", a->model)->required();
  detok->add_option("ids", a->ids)->required();
  detok->callback([&ctx, a] {
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& s : a->ids) {
      char* end = nullptr;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (end == s.c_str() || *end) return ctx.fail("not a token id: " + s);
      ids.push_back(v);
    }
    auto j = ctx.call("POST", "/api/detokenize", nlohmann::json{{"model", Context::model_ref(a->model)}, {"tokens", ids}});
    if (j.is_null()) return;
    std::string text = j.value("content", "");
    std::fwrite(text.data(), 1, text.size(), stdout);
    if (ctx.stdout_tty) std::fputc('\n', stdout);
  });

  auto* vocab = app.add_subcommand("vocab", "Print the vocabulary: id, type, piece as stored in the model (one line each)");
  vocab->add_option("model", a->model)->required();
  vocab->callback([&ctx, a] {
    auto j = ctx.call("POST", "/api/vocab", nlohmann::json{{"model", Context::model_ref(a->model)}});
    if (j.is_null()) return;
    for (const auto& t : j.value("tokens", nlohmann::json::array()))
      std::printf("%lld\t%s\t%s\n", (long long)t.value("id", 0LL), t.value("type", "").c_str(), t.value("piece", "").c_str());
  });

  auto* logits = app.add_subcommand("logits", "Print the final-position logits of PROMPT, one per line");
  logits->add_option("model", a->model)->required();
  logits->add_option("prompt", a->text)->required();
  logits->callback([&ctx, a] {
    auto j = ctx.call("POST", "/api/logits", nlohmann::json{{"model", Context::model_ref(a->model)}, {"prompt", a->text}});
    if (j.is_null()) return;
    for (const auto& v : j.value("logits", nlohmann::json::array())) std::printf("%.9g\n", v.get<double>());
  });
}

}  // namespace nurl::client
