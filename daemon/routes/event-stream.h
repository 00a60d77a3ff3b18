// EventStream: the ChunkSource behind every model-backed reply. It awaits the job's events on
// the connection's strand and turns them into chunks with a Format (NDJSON for the ollama API;
// SSE for /v1 and /v1/messages through their own framing). Every event is also added to a
// Reply aggregate, so the final object can carry the whole answer (`single` mode, stream:false,
// yields exactly one chunk) or totals a streaming API sends last (tool calls, usage).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
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

// How payloads become bytes on the wire. A payload is one JSON object, or several on their own
// lines (one Event may need several frames, e.g. Anthropic's content_block_start + _delta).
struct Framing {
  std::function<std::string(const std::string& payload)> frame;  // NDJSON: payload + "\n"
  std::string terminator;                                        // SSE: "data: [DONE]\n\n"
};

// A payload of several JSON objects, one per line, for formats that send more than one frame
// per Event.
class PayloadLines {
 public:
  void add(const nlohmann::json& j);
  void add(const nlohmann::ordered_json& j);
  std::string take() { return std::exchange(text_, {}); }

 private:
  void add_text(const std::string& line);
  std::string text_;
};

// SSE as OpenAI's chat and completions stream it: "data: {json}\n\n" per object, then
// "data: [DONE]\n\n".
Framing sse_data_framing();
// SSE with named events, as Anthropic's Messages and OpenAI's Responses stream it:
// "event: <type>\ndata: {json}\n\n" per object, the name being the object's "type"; no terminator.
Framing sse_event_framing();

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

// A Stream reply around an EventStream with an SSE framing (text/event-stream), or one JSON body
// when single. `error_body` is the API's error object for a status and message; it answers
// errors before the first byte (with that status) and, framed, errors after it.
using ErrorBody = std::function<std::string(int status, const std::string& message)>;
// An Error as a JSON reply in an API's shape (the status of its code).
http::Response error_reply(const Error& e, const ErrorBody& body);
http::Stream sse_stream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, Framing framing,
                        bool single, ErrorBody error_body);

}  // namespace nurl
