#include "routes/inspect.h"

#include <thread>

#include "api/ollama.h"
#include "engine/gguf/gguf.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "scheduler/channel.h"

namespace nurl {

namespace {

using api::Json;

struct Target {
  ModelRef ref;
  Json body;
};

// Parses the JSON body and resolves its "model" (or "name") field.
Result<Target> target_of(RouteContext& ctx, const http::Request& req) {
  auto name = api::parse_model_field(req.body);
  if (!name.ok()) return name.error();
  auto cfg = ctx.config.get();
  auto ref = resolve_model(*name, req.peer, cfg->allow_model_paths, ctx.store_resolve);
  if (!ref.ok()) return ref.error();
  return Target{std::move(ref).value(), Json::parse(req.body)};
}

Result<Tokenizer> tokenizer_of(const std::string& path) {
  auto f = gguf::File::open(path);
  if (!f.ok()) return f.error();
  return Tokenizer::from_gguf(*f);
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

http::Reply tokenize(RouteContext& ctx, const http::Request& req) {
  auto t = target_of(ctx, req);
  if (!t.ok()) return http::error_response(t.error());
  const Json& b = t->body;
  const Json* text = b.contains("content") ? &b["content"] : b.contains("prompt") ? &b["prompt"] : nullptr;
  if (!text || !text->is_string()) return http::error_response(400, "\"content\" must be a string");
  const bool parse_special = b.value("parse_special", true);
  const bool add_special = b.value("add_special", true);
  auto tok = tokenizer_of(t->ref.path);
  if (!tok.ok()) return http::error_response(tok.error());
  auto ids = tok->encode(text->get<std::string>(), add_special, parse_special);
  return http::json_response(200, dump(Json{{"model", t->ref.name}, {"tokens", ids}}));
}

http::Reply detokenize(RouteContext& ctx, const http::Request& req) {
  auto t = target_of(ctx, req);
  if (!t.ok()) return http::error_response(t.error());
  const Json& ids = t->body.contains("tokens") ? t->body["tokens"] : Json();
  if (!ids.is_array()) return http::error_response(400, "\"tokens\" must be an array of token ids");
  auto tok = tokenizer_of(t->ref.path);
  if (!tok.ok()) return http::error_response(tok.error());
  std::vector<int32_t> v;
  for (const auto& id : ids) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= tok->n_vocab())
      return http::error_response(400, "token id " + id.dump() + " is not in [0, " + std::to_string(tok->n_vocab()) + ")");
    v.push_back(id.get<int32_t>());
  }
  // Raw bytes of the pieces (special tokens rendered), concatenated: what the model "said".
  std::string bytes;
  for (int32_t id : v) bytes += tok->token_to_piece(id, true);
  return http::json_response(200, dump(Json{{"model", t->ref.name}, {"content", bytes}}));
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
  r.add("POST", "/api/tokenize", [&ctx](const http::Request& q) { return tokenize(ctx, q); });
  r.add("POST", "/api/detokenize", [&ctx](const http::Request& q) { return detokenize(ctx, q); });
  r.add("POST", "/api/vocab", [&ctx](const http::Request& q) { return vocab(ctx, q); });
  r.add("POST", "/api/logits", [&ctx](const http::Request& q) { return logits(ctx, q); });
}

}  // namespace nurl
