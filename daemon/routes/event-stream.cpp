#include "routes/event-stream.h"

namespace nurl {

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
        if (single_) {
          text_ += ev->text;
          continue;
        }
        if (ev->text.empty()) continue;
        co_return std::optional<std::string>(fmt_.chunk(ev->text) + "\n");
      case Kind::embedding:
        embeddings_.push_back(std::move(ev->embedding));
        continue;
      case Kind::done:
        finished_ = true;
        co_return std::optional<std::string>(fmt_.final(single_ ? text_ : std::string(), ev->done, embeddings_) +
                                             (single_ ? "" : "\n"));
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
  s.source = std::make_shared<EventStream>(std::move(ch), std::move(fmt), single);
  s.error_chunk = [](const Error& e) { return http::ndjson_error_line(e); };
  return s;
}

}  // namespace nurl
