// Feeds synthetic scheduler Events through an EventFormat + Framing (an EventStream on a strand,
// as the server drives it) and splits SSE bytes into frames strictly: every frame must be
// "data: <one line>\n\n" or "event: <name>\ndata: <one line>\n\n", nothing else.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "routes/event-stream.h"

namespace nurl::test {

inline sched::Event text_event(std::string t, std::vector<sched::TokenLogprob> lps = {}) {
  sched::Event e;
  e.kind = sched::Event::Kind::text;
  e.text = std::move(t);
  e.logprobs = std::move(lps);
  return e;
}

inline sched::Event thinking_event(std::string t) {
  sched::Event e = text_event(std::move(t));
  e.kind = sched::Event::Kind::thinking;
  return e;
}

inline sched::Event tool_event(std::string id, std::string name, std::string args, int index) {
  sched::Event e;
  e.kind = sched::Event::Kind::tool_call;
  e.tool_call = sched::ToolCall{std::move(id), std::move(name), std::move(args), index};
  return e;
}

inline sched::Event done_event(std::string reason, int prompt, int eval, std::string stop_sequence = "") {
  sched::Event e;
  e.kind = sched::Event::Kind::done;
  e.done.reason = std::move(reason);
  e.done.prompt_eval_count = prompt;
  e.done.eval_count = eval;
  e.done.stop_sequence = std::move(stop_sequence);
  return e;
}

inline sched::Event error_event(Error err) {
  sched::Event e;
  e.kind = sched::Event::Kind::error;
  e.error = std::move(err);
  return e;
}

struct Drained {
  std::vector<std::string> chunks;  // each chunk the stream produced
  std::optional<Error> error;       // how it ended, when with an error
  std::string bytes() const {
    std::string b;
    for (const auto& c : chunks) b += c;
    return b;
  }
};

inline Drained drain(const std::vector<sched::Event>& events, EventFormat fmt, Framing framing, bool single) {
  auto ch = std::make_shared<sched::Channel<sched::Event>>(events.size() + 1);
  for (const auto& e : events) ch->push(e);
  ch->close();
  EventStream es(ch, std::move(fmt), std::move(framing), single);
  Drained out;
  boost::asio::io_context io;
  auto fut = boost::asio::co_spawn(
      boost::asio::make_strand(io),
      [&]() -> boost::asio::awaitable<void> {
        while (true) {
          auto c = co_await es.next();
          if (!c.ok()) {
            out.error = c.error();
            co_return;
          }
          if (!c->has_value()) co_return;
          out.chunks.push_back(**c);
        }
      },
      boost::asio::use_future);
  io.run();
  fut.get();
  return out;
}

struct Frame {
  std::string event;  // "" for data-only frames
  std::string data;
  nlohmann::json json() const { return nlohmann::json::parse(data); }
};

// Splits SSE bytes; a malformed frame fails the test.
inline std::vector<Frame> sse_frames(const std::string& bytes) {
  std::vector<Frame> frames;
  size_t i = 0;
  while (i < bytes.size()) {
    size_t end = bytes.find("\n\n", i);
    EXPECT_NE(end, std::string::npos) << "unterminated SSE frame: " << bytes.substr(i);
    if (end == std::string::npos) break;
    std::string block = bytes.substr(i, end - i);
    Frame f;
    if (block.rfind("event: ", 0) == 0) {
      size_t nl = block.find('\n');
      EXPECT_NE(nl, std::string::npos) << block;
      f.event = block.substr(7, nl - 7);
      block = block.substr(nl + 1);
    }
    EXPECT_EQ(block.rfind("data: ", 0), 0u) << "frame without data: " << block;
    f.data = block.substr(6);
    EXPECT_EQ(f.data.find('\n'), std::string::npos) << "multi-line data: " << block;
    frames.push_back(std::move(f));
    i = end + 2;
  }
  return frames;
}

}  // namespace nurl::test
