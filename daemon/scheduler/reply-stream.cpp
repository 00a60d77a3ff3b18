#include "scheduler/reply-stream.h"

namespace nurl::sched {

ReplyStream::ReplyStream(std::vector<std::string> stops, std::unique_ptr<ReplyParser> parser)
    : text_(std::move(stops)), parser_(std::move(parser)) {}

void ReplyStream::emit(Event e, std::vector<Event>& out) {
  e.logprobs = std::move(lp_);
  lp_.clear();
  out.push_back(std::move(e));
}

// The parser's pieces as events; calls are numbered in order.
void ReplyStream::drain(std::vector<Event>& out) {
  for (auto& p : pieces_) {
    Event e;
    if (p.kind == ReplyPiece::Kind::tool_call) {
      e.kind = Event::Kind::tool_call;
      e.tool_call = std::move(p.call);
      e.tool_call.index = n_calls_++;
    } else {
      if (p.text.empty()) continue;
      e.kind = p.kind == ReplyPiece::Kind::thinking ? Event::Kind::thinking : Event::Kind::text;
      e.text = std::move(p.text);
    }
    emit(std::move(e), out);
  }
  pieces_.clear();
}

void ReplyStream::route(const std::string& text, std::vector<Event>& out) {
  if (parser_) {
    parser_->push(text, pieces_);
    drain(out);
  } else if (!text.empty()) {
    Event e;
    e.text = text;
    emit(std::move(e), out);
  }
}

void ReplyStream::push(std::string_view piece, std::optional<TokenLogprob> lp, std::vector<Event>& out) {
  if (lp) lp_.push_back(std::move(*lp));
  route(text_.push(piece), out);
}

void ReplyStream::finish(std::vector<Event>& out) {
  route(text_.finish(), out);
  if (parser_) {
    parser_->finish(pieces_);
    drain(out);
  }
  if (!lp_.empty()) emit(Event{}, out);  // log-probabilities of tokens that printed nothing
}

}  // namespace nurl::sched
