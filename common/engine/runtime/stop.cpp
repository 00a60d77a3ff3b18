// Stop-string matching across token boundaries (see stop.h).
#include "engine/runtime/stop.h"

#include <algorithm>

namespace nurl {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopMatcher::push(std::string_view piece) {
  if (stopped_) return {};
  held_.append(piece);

  // The earliest complete match wins (on the same start, the shortest string).
  size_t first = std::string::npos;
  for (const auto& s : stops_) {
    size_t at = held_.find(s);
    if (at != std::string::npos && (first == std::string::npos || at < first ||
                                    (at == first && s.size() < matched_.size()))) {
      first = at;
      matched_ = s;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }

  // Hold back the longest suffix of held_ that is a proper prefix of some stop string.
  size_t keep = 0;
  for (const auto& s : stops_) {
    const size_t max_len = std::min(s.size() - 1, held_.size());
    for (size_t len = max_len; len > keep; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        keep = len;
        break;
      }
    }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(held_);
  return stopped_ ? std::string() : out;
}

const char* done_reason_name(DoneReason r) {
  switch (r) {
    case DoneReason::stop: return "stop";
    case DoneReason::length: return "length";
    case DoneReason::cancelled: return "cancelled";
  }
  return "stop";
}

}  // namespace nurl
