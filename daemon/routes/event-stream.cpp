#include "routes/event-stream.h"

namespace nurl {

namespace {

void add_to(ReplyAggregate& agg, sched::Event& ev) {
  using Kind = sched::Event::Kind;
  switch (ev.kind) {
    case Kind::text: agg.text += ev.text; break;
    case Kind::thinking: agg.thinking += ev.text; break;
    case Kind::tool_call: agg.tool_calls.push_back(ev.tool_call); break;
    case Kind::embedding: agg.embeddings.push_back(std::move(ev.embedding)); return;
    default: return;
  }
  agg.logprobs.insert(agg.logprobs.end(), ev.logprobs.begin(), ev.logprobs.end());
  ++agg.n_events;
}

}  // namespace

boost::asio::awaitable<Result<std::optional<std::string>>> EventStream::next() {
  using Kind = sched::Event::Kind;
  if (finished_) co_return std::optional<std::string>{};
  while (true) {
    auto ev = co_await ch_->pop();
    if (!ev) {
      finished_ = true;
      if (ch_->cancelled()) co_return Error(Code::cancelled, "request cancelled");
      co_return Error(Code::internal, "the model worker ended the request without a result");
    }
    switch (ev->kind) {
      case Kind::text:
      case Kind::thinking:
      case Kind::tool_call: {
        if (ev->kind != Kind::tool_call && ev->text.empty() && ev->logprobs.empty()) continue;
        add_to(agg_, *ev);
        if (single_) continue;
        std::string payload = fmt_.chunk ? fmt_.chunk(*ev, agg_) : std::string();
        if (payload.empty()) continue;
        co_return std::optional<std::string>(framing_.frame(payload));
      }
      case Kind::embedding:
        add_to(agg_, *ev);
        continue;
      case Kind::done: {
        finished_ = true;
        std::string payload = fmt_.final(agg_, ev->done);
        if (single_) co_return std::optional<std::string>(std::move(payload));
        std::string out = payload.empty() ? std::string() : framing_.frame(payload);
        if (fmt_.after_final)
          for (const auto& p : fmt_.after_final(agg_, ev->done)) out += framing_.frame(p);
        out += framing_.terminator;
        co_return std::optional<std::string>(std::move(out));
      }
      case Kind::error:
        finished_ = true;
        co_return ev->error;
    }
  }
}

http::Stream ndjson_stream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, bool single) {
  http::Stream s;
  s.content_type = single ? "application/json; charset=utf-8" : "application/x-ndjson";
  s.single = single;
  Framing framing;
  framing.frame = [](const std::string& payload) { return payload + "\n"; };
  s.source = std::make_shared<EventStream>(std::move(ch), std::move(fmt), std::move(framing), single);
  s.error_chunk = [](const Error& e) { return http::ndjson_error_line(e); };
  return s;
}

}  // namespace nurl
