// Stop sequences over streamed text. Token pieces arrive one by one; a stop string may span
// several of them. Invariants: no byte of a matched stop string (nor anything after it) is ever
// returned; text that could still be the start of a stop string is held back until the next
// piece resolves it; everything else is returned as soon as it arrives. Held text starts at a
// byte where a stop string starts, so it never splits a UTF-8 character of valid input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nurl {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);

  // Appends a piece; returns the text that is safe to emit now. After a match, stopped() is
  // true, the return value ends right before the stop string and later calls return "".
  std::string push(std::string_view piece);
  // End of generation without a match: the held-back text, which is not a stop string.
  std::string flush();

  bool stopped() const { return stopped_; }
  // The stop string that matched (empty unless stopped()).
  const std::string& matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

// Why a generation ended, as ollama's done_reason spells it.
enum class DoneReason { stop, length, cancelled };
const char* done_reason_name(DoneReason r);

}  // namespace nurl
