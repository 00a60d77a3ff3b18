// TextAssembler: turns a stream of token pieces into text that is safe to send: never half a
// UTF-8 sequence, never the start of a stop string that may still complete. When a stop string
// completes, the text before it is released and the rest is dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nurl::sched {

class TextAssembler {
 public:
  explicit TextAssembler(std::vector<std::string> stops = {});
  // Adds a piece; returns the text that can be emitted now (possibly empty).
  std::string push(std::string_view piece);
  // At the end of generation: whatever is still held back (empty after a stop).
  std::string finish();
  bool stopped() const { return stopped_; }
  // The stop string that ended the text ("" while not stopped).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace nurl::sched
