// ReplyStream: one sequence's output on its way to events. Token pieces go through the text
// assembler (whole UTF-8 characters, stop strings never emitted), then the model's reply parser
// (reasoning, text and tool calls as its template family writes them); each event carries the
// log-probabilities of the tokens behind it (tokens whose text is still held back ride on the
// next event, or on a last empty text event at the end).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/job.h"
#include "scheduler/model.h"
#include "scheduler/text-assembler.h"

namespace nurl::sched {

class ReplyStream {
 public:
  ReplyStream() = default;
  ReplyStream(std::vector<std::string> stops, std::unique_ptr<ReplyParser> parser);

  void push(std::string_view piece, std::optional<TokenLogprob> lp, std::vector<Event>& out);
  // End of generation: what the assembler and the parser still hold.
  void finish(std::vector<Event>& out);
  bool stopped() const { return text_.stopped(); }
  const std::string& matched_stop() const { return text_.matched(); }  // the stop sequence that ended it
  ReplyParser* parser() const { return parser_.get(); }

 private:
  void route(const std::string& text, std::vector<Event>& out);
  void drain(std::vector<Event>& out);
  void emit(Event e, std::vector<Event>& out);

  TextAssembler text_;
  std::unique_ptr<ReplyParser> parser_;
  std::vector<TokenLogprob> lp_;
  std::vector<ReplyPiece> pieces_;
  int n_calls_ = 0;
};

}  // namespace nurl::sched
