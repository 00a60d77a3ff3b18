// POST /v1/completions: the legacy text completion. The prompt is continued as is (no chat
// template), as OpenAI and llama-server do; `echo` puts it in front of the answer.
#include "routes/fill-in-middle.h"
#include "routes/openai-common.h"
#include "routes/openai.h"

namespace nurl::v1 {

namespace {

// The legacy logprobs object for some tokens; `offset` is the text offset of the first one and
// moves past them.
Json legacy_logprobs(const std::vector<sched::TokenLogprob>& lps, size_t* offset) {
  Json tokens = Json::array(), lp = Json::array(), top = Json::array(), offsets = Json::array();
  for (const auto& t : lps) {
    tokens.push_back(t.token);
    lp.push_back(t.logprob);
    Json alts = Json::object();
    for (const auto& [tok, l] : t.top) alts[tok] = l;
    top.push_back(std::move(alts));
    offsets.push_back(*offset);
    *offset += t.token.size();
  }
  return Json{{"tokens", tokens}, {"token_logprobs", lp}, {"top_logprobs", top}, {"text_offset", offsets}};
}

Json completion(const ReplyInfo& info, std::string text, Json logprobs, Json finish) {
  Json j{{"id", info.id},
         {"object", "text_completion"},
         {"created", info.created},
         {"model", info.model},
         {"system_fingerprint", "fp_nurllama"},
         {"choices", Json::array({Json{{"text", std::move(text)},
                                       {"index", 0},
                                       {"logprobs", std::move(logprobs)},
                                       {"finish_reason", std::move(finish)}}})}};
  return j;
}

}  // namespace

EventFormat completion_format(const ReplyInfo& info, bool stream, std::string echo, int logprobs) {
  EventFormat fmt;
  if (!stream) {
    fmt.final = [info, echo, logprobs](const ReplyAggregate& agg, const sched::DoneInfo& d) {
      size_t offset = echo.size();
      Json lp = logprobs >= 0 ? legacy_logprobs(agg.logprobs, &offset) : Json(nullptr);
      Json j = completion(info, echo + agg.text, std::move(lp), finish_reason(agg, d));
      j["usage"] = usage(d);
      return api::dump(j);
    };
    return fmt;
  }
  struct State {
    bool echoed = false;
    size_t offset = 0;
  };
  auto st = std::make_shared<State>();
  st->offset = echo.size();
  fmt.chunk = [info, echo, logprobs, st](const sched::Event& ev, const ReplyAggregate&) {
    if (ev.kind != sched::Event::Kind::text) return std::string();
    std::string text = st->echoed ? ev.text : echo + ev.text;
    st->echoed = true;
    Json lp = logprobs >= 0 ? legacy_logprobs(ev.logprobs, &st->offset) : Json(nullptr);
    Json j = completion(info, std::move(text), std::move(lp), nullptr);
    if (info.include_usage) j["usage"] = nullptr;
    return api::dump(j);
  };
  fmt.final = [info, echo, st](const ReplyAggregate& agg, const sched::DoneInfo& d) {
    Json j = completion(info, st->echoed ? std::string() : echo, nullptr, finish_reason(agg, d));
    if (info.include_usage) j["usage"] = nullptr;
    return api::dump(j);
  };
  if (info.include_usage) {
    fmt.after_final = [info](const ReplyAggregate&, const sched::DoneInfo& d) {
      Json j = completion(info, "", nullptr, nullptr);
      j["choices"] = Json::array();
      j["usage"] = usage(d);
      return std::vector<std::string>{api::dump(j)};
    };
  }
  return fmt;
}

namespace {

http::Reply completions(RouteContext& ctx, const http::Request& req) {
  auto parsed = api::openai::parse_completion_request(req.body);
  if (!parsed.ok()) return error_reply(parsed.error());
  auto& q = *parsed;
  auto c = begin(ctx, req, q.common);
  if (!c.ok()) return error_reply(c.error());
  if (!q.suffix.empty()) {
    c->job->prepare = fim_prepare(q.prompt, q.suffix);  // a 400 when the vocabulary has no FIM tokens
  } else {
    c->job->prepare = [prompt = q.prompt](const sched::LoadedModel& m) -> Result<sched::PreparedPrompt> {
      sched::PreparedPrompt p;
      p.rendered = prompt;
      NURL_ASSIGN(p.tokens, m.tokenize(prompt, true));
      return p;
    };
  }
  ReplyInfo info{random_id("cmpl-"), q.common.model, unix_now(), q.common.include_usage, q.logprobs >= 0};
  return submit(ctx, c->job, completion_format(info, q.common.stream, q.echo ? q.prompt : "", q.logprobs),
                q.common.stream);
}

}  // namespace

void add_completion_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/v1/completions", [&ctx](const http::Request& q) { return completions(ctx, q); });
}

}  // namespace nurl::v1
