// EventStream: the ChunkSource behind every model-backed reply. It awaits the job's events on
// the connection's strand and turns them into chunks with a Format (NDJSON for the ollama API;
// SSE for /v1 plugs in the same way through its own framing). Every event is also added to a
// Reply aggregate, so the final object can carry the whole answer (`single` mode, stream:false,
// yields exactly one chunk) or totals a streaming API sends last (tool calls, usage).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/message.h"
#include "scheduler/job.h"

namespace nurl {

// Everything a reply produced, in order of arrival.
struct ReplyAggregate {
  std::string text;                              // the answer
  std::string thinking;                          // the reasoning (thinking events)
  std::vector<sched::ToolCall> tool_calls;       // parsed calls
  std::vector<sched::TokenLogprob> logprobs;     // per generated token, when asked for
  std::vector<std::vector<float>> embeddings;    // one per input
  int n_events = 0;                              // text/thinking/tool_call events seen
};

struct EventFormat {
  // While streaming: the payload for one text, thinking or tool_call event (without framing),
  // or "" to send nothing for it. `agg` already includes the event.
  std::function<std::string(const sched::Event& ev, const ReplyAggregate& agg)> chunk;
  // The last payload. In single mode it is the only one and `agg` holds the whole reply; when
  // streaming, the chunks already carried the pieces.
  std::function<std::string(const ReplyAggregate& agg, const sched::DoneInfo& done)> final;
  // Extra payloads after the final one (e.g. an OpenAI usage chunk); optional.
  std::function<std::vector<std::string>(const ReplyAggregate& agg, const sched::DoneInfo& done)> after_final;
};

// How payloads become bytes on the wire.
struct Framing {
  std::function<std::string(const std::string& payload)> frame;  // NDJSON: payload + "\n"
  std::string terminator;                                        // SSE: "data: [DONE]\n\n"
};

class EventStream : public http::ChunkSource {
 public:
  EventStream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, Framing framing, bool single)
      : ch_(std::move(ch)), fmt_(std::move(fmt)), framing_(std::move(framing)), single_(single) {}

  boost::asio::awaitable<Result<std::optional<std::string>>> next() override;
  void cancel() override { ch_->cancel(); }

 private:
  std::shared_ptr<sched::Channel<sched::Event>> ch_;
  EventFormat fmt_;
  Framing framing_;
  bool single_;
  bool finished_ = false;
  ReplyAggregate agg_;
};

// A Stream reply around an EventStream, NDJSON framing (single: one JSON body).
http::Stream ndjson_stream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, bool single);

}  // namespace nurl
