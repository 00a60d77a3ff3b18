// GET /v1/models, GET /v1/models/{id} (the store's models) and POST /v1/embeddings; and the
// registration of every /v1 route.
#include <cstring>

#include "routes/embed.h"
#include "routes/openai-common.h"
#include "routes/openai.h"
#include "store/store.h"

namespace nurl {

namespace v1 {

namespace {

Json model_object(const Manifest& m) {
  auto t = parse_rfc3339(m.added_at);
  int64_t created = t ? std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count() : 0;
  return Json{{"id", m.name.display()}, {"object", "model"}, {"created", created}, {"owned_by", m.name.ns}};
}

Error no_store() { return Error(Code::busy, "the model store is not available (see the daemon log)"); }

http::Reply list_models(RouteContext& ctx) {
  if (!ctx.store) return error_reply(no_store());
  Json data = Json::array();
  for (const auto& m : ctx.store->list()) data.push_back(model_object(m));
  return http::json_response(200, api::dump(Json{{"object", "list"}, {"data", data}}));
}

http::Reply get_model(RouteContext& ctx, const http::Request& req) {
  if (!ctx.store) return error_reply(no_store());
  const std::string& id = req.params.at("id");
  auto name = parse_model_name(id);
  if (!name.ok()) return error_reply(name.error());
  auto m = ctx.store->read_manifest(*name);
  if (!m.ok()) {
    if (m.error().code == Code::not_found)
      return error_reply(Error(Code::not_found, "The model '" + id + "' does not exist"));
    return error_reply(m.error());
  }
  return http::json_response(200, api::dump(model_object(*m)));
}

std::string base64_floats(const std::vector<float>& v) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * sizeof(float), '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &v[i], sizeof u);
    for (int b = 0; b < 4; ++b) bytes[i * 4 + static_cast<size_t>(b)] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

http::Reply embeddings(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::openai::parse_embedding_request(req.body);
  if (!parsed.ok()) return error_reply(parsed.error());
  auto& q = *parsed;
  auto c = begin_inference(ctx, req, {q.model, q.options, q.keep_alive, q.truncate});
  if (!c.ok()) return error_reply(c.error());
  c->job->kind = sched::Job::Kind::embed;
  c->job->embed_inputs = q.inputs;
  c->job->embed_tokens = q.token_inputs;
  EventFormat fmt;
  fmt.final = [model = q.model, dims = q.dimensions, b64 = q.base64](const ReplyAggregate& agg,
                                                                      const sched::DoneInfo& d) {
    Json data = Json::array();
    for (size_t i = 0; i < agg.embeddings.size(); ++i) {
      auto e = resize_embedding(agg.embeddings[i], dims);
      data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", b64 ? Json(base64_floats(e)) : Json(e)}});
    }
    return api::dump(Json{{"object", "list"},
                          {"data", data},
                          {"model", model},
                          {"usage", {{"prompt_tokens", d.prompt_eval_count}, {"total_tokens", d.prompt_eval_count}}}});
  };
  return submit(ctx, c->job, std::move(fmt), false);
}

}  // namespace

void add_model_routes(http::Router& r, RouteContext& ctx) {
  r.add("GET", "/v1/models", [&ctx](const http::Request&) { return list_models(ctx); });
  r.add("GET", "/v1/models/*id", [&ctx](const http::Request& q) { return get_model(ctx, q); });
  r.add("POST", "/v1/embeddings", [&ctx](const http::Request& q) { return embeddings(ctx, q); });
}

}  // namespace v1

void add_openai_routes(http::Router& r, RouteContext& ctx) {
  v1::add_chat_routes(r, ctx);
  v1::add_completion_routes(r, ctx);
  v1::add_responses_routes(r, ctx);
  v1::add_model_routes(r, ctx);
}

}  // namespace nurl
