#include "routes/event-stream.h"

#include <nlohmann/json.hpp>

#include "api/json-fields.h"
#include "core/json-text.h"

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

// Calls f for each line of a payload.
template <class F>
void each_line(const std::string& payload, F f) {
  size_t i = 0;
  while (i < payload.size()) {
    size_t j = payload.find('\n', i);
    if (j == std::string::npos) j = payload.size();
    if (j > i) f(std::string_view(payload).substr(i, j - i));
    i = j + 1;
  }
}

}  // namespace

void PayloadLines::add(const nlohmann::json& j) { add_text(api::dump(j)); }
void PayloadLines::add(const nlohmann::ordered_json& j) { add_text(api::dump(j)); }

void PayloadLines::add_text(const std::string& line) {
  if (!text_.empty()) text_ += "\n";
  text_ += line;
}

Framing sse_data_framing() {
  Framing f;
  f.frame = [](const std::string& payload) {
    std::string out;
    each_line(payload, [&](std::string_view line) {
      out += "data: ";
      out += line;
      out += "\n\n";
    });
    return out;
  };
  f.terminator = "data: [DONE]\n\n";
  return f;
}

Framing sse_event_framing() {
  Framing f;
  f.frame = [](const std::string& payload) {
    std::string out;
    each_line(payload, [&](std::string_view line) {
      auto j = parse_json(line);
      std::string type = "message";
      if (j.is_object() && j.contains("type") && j["type"].is_string()) type = j["type"].get<std::string>();
      out += "event: " + type + "\ndata: ";
      out += line;
      out += "\n\n";
    });
    return out;
  };
  return f;
}

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

http::Response error_reply(const Error& e, const ErrorBody& body) {
  const int status = http_status(e.code);
  return http::json_response(status, body(status, e.msg));
}

http::Stream sse_stream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, Framing framing,
                        bool single, ErrorBody error_body) {
  http::Stream s;
  s.content_type = single ? "application/json; charset=utf-8" : "text/event-stream";
  s.single = single;
  s.error_reply = [error_body](const Error& e) { return error_reply(e, error_body); };
  s.error_chunk = [error_body, frame = framing.frame](const Error& e) {
    return frame(error_body(http_status(e.code), e.msg));
  };
  s.source = std::make_shared<EventStream>(std::move(ch), std::move(fmt), std::move(framing), single);
  return s;
}

}  // namespace nurl
