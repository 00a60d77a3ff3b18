#include "scheduler/text-assembler.h"

#include <algorithm>
#include <utility>

namespace nurl::sched {

namespace {

// Bytes at the end of s that start a UTF-8 sequence not yet complete.
size_t incomplete_utf8_tail(std::string_view s) {
  for (size_t back = 1; back <= std::min<size_t>(4, s.size()); ++back) {
    unsigned char c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

TextAssembler::TextAssembler(std::vector<std::string> stops) {
  for (auto& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

std::string TextAssembler::push(std::string_view piece) {
  if (stopped_) return {};
  pending_ += piece;
  size_t first = std::string::npos;
  for (const auto& s : stops_) {
    size_t at = pending_.find(s);
    if (at < first) {
      first = at;
      matched_ = s;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, first);
    pending_.clear();
    return out;
  }
  // Hold back the longest suffix that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const auto& s : stops_) {
    for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n) {
      if (std::string_view(pending_).substr(pending_.size() - n) == std::string_view(s).substr(0, n)) {
        hold = n;
        break;
      }
    }
  }
  std::string_view ready = std::string_view(pending_).substr(0, pending_.size() - hold);
  size_t cut = ready.size() - incomplete_utf8_tail(ready);
  std::string out = pending_.substr(0, cut);
  pending_.erase(0, cut);
  return out;
}

std::string TextAssembler::finish() {
  if (stopped_) return {};
  return std::exchange(pending_, {});
}

}  // namespace nurl::sched
