#include "routes/inspect.h"

#include <thread>

#include "api/json-fields.h"
#include "api/ollama.h"
#include "core/json-text.h"
#include "core/utf8.h"
#include "engine/gguf/gguf.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "scheduler/channel.h"
#include "scheduler/scheduler.h"

namespace nurl {

namespace {

using api::Json;

struct Target {
  ModelRef ref;
  Json body;
};

// Parses the JSON body and resolves its "model" (or "name") field. With `resident_default` (the
// llama-server routes, whose clients name no model) a missing model means the one resident model.
Result<Target> target_of(RouteContext& ctx, const http::Request& req, bool resident_default = false) {
  NURL_ASSIGN(Json body, api::parse_body(req.body));
  std::string name;
  NURL_TRY(api::get_string(body, "model", &name));
  if (name.empty()) NURL_TRY(api::get_string(body, "name", &name));
  if (name.empty() && resident_default && ctx.scheduler) {
    auto resident = ctx.scheduler->resident();
    if (resident.size() == 1) return Target{ModelRef{resident[0].name, resident[0].spec.path, "", "", {}, "", {}}, body};
    return Error(Code::invalid_argument, "model is required (" + std::to_string(resident.size()) +
                                             " models are loaded, so none is implied)");
  }
  if (name.empty()) return Error(Code::invalid_argument, "model is required");
  auto cfg = ctx.config.get();
  NURL_ASSIGN(ModelRef ref, resolve_model(name, req.peer, cfg->allow_model_paths, ctx.store_resolve));
  return Target{std::move(ref), std::move(body)};
}

Result<Tokenizer> tokenizer_of(const std::string& path) {
  auto f = gguf::File::open(path);
  if (!f.ok()) return f.error();
  return Tokenizer::from_gguf(*f);
}

using api::dump;

// Shared by /api/tokenize and llama-server's /tokenize (which defaults add_special to false).
http::Reply tokenize(RouteContext& ctx, const http::Request& req, bool llama_server) {
  auto t = target_of(ctx, req, llama_server);
  if (!t.ok()) return http::error_response(t.error());
  const Json& b = t->body;
  const Json* text = api::field(b, "content");
  if (!text) text = api::field(b, "prompt");
  if (!text || !text->is_string()) return http::error_response(400, "\"content\" must be a string");
  bool parse_special = true, add_special = !llama_server, with_pieces = false;
  const std::pair<const char*, bool*> flags[] = {
      {"parse_special", &parse_special}, {"add_special", &add_special}, {"with_pieces", &with_pieces}};
  for (const auto& [key, out] : flags)
    if (auto r = api::get_bool(b, key, out); !r.ok()) return http::error_response(r.error());
  auto tok = tokenizer_of(t->ref.path);
  if (!tok.ok()) return http::error_response(tok.error());
  auto ids = tok->encode(text->get<std::string>(), add_special, parse_special);
  Json tokens = Json::array();
  for (int32_t id : ids) {
    if (!with_pieces) {
      tokens.push_back(id);
      continue;
    }
    // As llama-server: the piece as a string when it is valid UTF-8, else its bytes.
    std::string piece = tok->token_to_piece(id, true);
    Json p = Json::array();
    if (utf8::valid(piece)) p = piece;
    else for (unsigned char c : piece) p.push_back(static_cast<int>(c));
    tokens.push_back({{"id", id}, {"piece", p}});
  }
  Json out{{"tokens", tokens}};
  if (!llama_server) out["model"] = t->ref.name;
  return http::json_response(200, dump(out));
}

http::Reply detokenize(RouteContext& ctx, const http::Request& req, bool llama_server) {
  auto t = target_of(ctx, req, llama_server);
  if (!t.ok()) return http::error_response(t.error());
  const Json* ids = api::field(t->body, "tokens");
  if (!ids || !ids->is_array()) return http::error_response(400, "\"tokens\" must be an array of token ids");
  auto tok = tokenizer_of(t->ref.path);
  if (!tok.ok()) return http::error_response(tok.error());
  std::vector<int32_t> v;
  for (const auto& id : *ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= tok->n_vocab())
      return http::error_response(400, "token id " + dump_json(id) + " is not in [0, " + std::to_string(tok->n_vocab()) + ")");
    v.push_back(id.get<int32_t>());
  }
  // Raw bytes of the pieces (special tokens rendered), concatenated: what the model "said".
  std::string bytes;
  for (int32_t id : v) bytes += tok->token_to_piece(id, true);
  Json out{{"content", bytes}};
  if (!llama_server) out["model"] = t->ref.name;
  return http::json_response(200, dump(out));
}

http::Reply vocab(RouteContext& ctx, const http::Request& req) {
  auto t = target_of(ctx, req);
  if (!t.ok()) return http::error_response(t.error());
  auto tok = tokenizer_of(t->ref.path);
  if (!tok.ok()) return http::error_response(tok.error());
  Json tokens = Json::array();
  for (int32_t id = 0; id < tok->n_vocab(); ++id)
    tokens.push_back({{"id", id}, {"type", std::string(token_type_name(tok->token_type(id)))},
                      {"piece", std::string(tok->token_text(id))}, {"score", tok->token_score(id)}});
  return http::json_response(200, dump(Json{{"model", t->ref.name}, {"tokens", tokens}}));
}

// Runs `work` on its own thread and streams its single result, so the I/O thread never waits
// on the forward pass.
class BackgroundResult : public http::ChunkSource {
 public:
  explicit BackgroundResult(std::function<Result<std::string>()> work) : ch_(std::make_shared<sched::Channel<Result<std::string>>>(1)) {
    std::thread([ch = ch_, work = std::move(work)] {
      ch->push(work());
      ch->close();
    }).detach();
  }
  boost::asio::awaitable<Result<std::optional<std::string>>> next() override {
    if (done_) co_return std::optional<std::string>();
    auto r = co_await ch_->pop();
    done_ = true;
    if (!r) co_return Error(Code::cancelled, "cancelled");
    if (!r->ok()) co_return r->error();
    co_return std::optional<std::string>(std::move(*r).value());
  }
  void cancel() override { ch_->cancel(); }

 private:
  std::shared_ptr<sched::Channel<Result<std::string>>> ch_;
  bool done_ = false;
};

http::Reply logits(RouteContext& ctx, const http::Request& req) {
  auto t = target_of(ctx, req);
  if (!t.ok()) return http::error_response(t.error());
  const Json& p = t->body.contains("prompt") ? t->body["prompt"] : Json();
  if (!p.is_string()) return http::error_response(400, "\"prompt\" must be a string");
  std::string path = t->ref.path, name = t->ref.name, prompt = p.get<std::string>();
  http::Stream s;
  s.single = true;
  s.content_type = "application/json; charset=utf-8";
  s.source = std::make_shared<BackgroundResult>([path, name, prompt]() -> Result<std::string> {
    NURL_ASSIGN(auto model, Model::load(path));
    NURL_ASSIGN(auto tok, tokenizer_of(path));
    auto ids = tok.encode(prompt, true, true);
    if (ids.empty()) return Error(Code::invalid_argument, "the prompt has no tokens");
    ContextOptions o;
    o.n_ctx = static_cast<int>(ids.size());
    NURL_ASSIGN(auto context, Context::create(model, o));
    NURL_ASSIGN(auto row, context->eval(ids));
    return dump(Json{{"model", name}, {"tokens", ids}, {"logits", std::vector<float>(row.begin(), row.end())}});
  });
  return s;
}

}  // namespace

void add_inspect_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/api/tokenize", [&ctx](const http::Request& q) { return tokenize(ctx, q, false); });
  r.add("POST", "/api/detokenize", [&ctx](const http::Request& q) { return detokenize(ctx, q, false); });
  // llama-server's names and defaults (tools written for llama-server work unchanged).
  r.add("POST", "/tokenize", [&ctx](const http::Request& q) { return tokenize(ctx, q, true); });
  r.add("POST", "/detokenize", [&ctx](const http::Request& q) { return detokenize(ctx, q, true); });
  r.add("POST", "/api/vocab", [&ctx](const http::Request& q) { return vocab(ctx, q); });
  r.add("POST", "/api/logits", [&ctx](const http::Request& q) { return logits(ctx, q); });
}

}  // namespace nurl
