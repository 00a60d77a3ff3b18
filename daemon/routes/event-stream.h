// EventStream: the ChunkSource behind every model-backed reply. It awaits the job's events on
// the connection's strand and turns them into chunks with a Format (NDJSON for the ollama API;
// SSE formats plug in the same way). In `single` mode (stream:false) it aggregates and yields
// exactly one chunk: the final object with the whole text.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "http/message.h"
#include "scheduler/job.h"

namespace nurl {

struct EventFormat {
  // A piece of text while streaming.
  std::function<std::string(const std::string& text)> chunk;
  // The last object; `text` is the whole answer in single mode, "" when streaming.
  std::function<std::string(const std::string& text, const sched::DoneInfo& done,
                            const std::vector<std::vector<float>>& embeddings)>
      final;
};

class EventStream : public http::ChunkSource {
 public:
  EventStream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, bool single)
      : ch_(std::move(ch)), fmt_(std::move(fmt)), single_(single) {}

  boost::asio::awaitable<Result<std::optional<std::string>>> next() override;
  void cancel() override { ch_->cancel(); }

 private:
  std::shared_ptr<sched::Channel<sched::Event>> ch_;
  EventFormat fmt_;
  bool single_;
  bool finished_ = false;
  std::string text_;
  std::vector<std::vector<float>> embeddings_;
};

// A Stream reply around an EventStream, NDJSON framing.
http::Stream ndjson_stream(std::shared_ptr<sched::Channel<sched::Event>> ch, EventFormat fmt, bool single);

}  // namespace nurl
