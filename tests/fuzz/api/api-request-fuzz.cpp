// libFuzzer target: any bytes as an OpenAI (chat, completions, embeddings, responses) or
// Anthropic (messages, count_tokens) request body; the first byte picks the parser. Findings are
// crashes, sanitizer reports, hangs and leaks; parse errors are expected outcomes. A body that
// parses must keep the invariants the routes rely on.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/anthropic.h"
#include "api/openai.h"

namespace {

void check(const nurl::api::StructuredFields& s) {
  if (s.top_logprobs < -1 || s.top_logprobs > 20) std::abort();
  if (!s.tools.empty() && !nurl::api::Json::parse(s.tools, nullptr, false).is_array()) std::abort();
  if (!s.format.empty() && s.format != "json" && !nurl::api::Json::parse(s.format, nullptr, false).is_object())
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 256 * 1024) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  namespace oa = nurl::api::openai;
  namespace an = nurl::api::anthropic;
  switch (data[0] % 6) {
    case 0:
      if (auto r = oa::parse_chat_request(body); r.ok()) {
        check(r->common.structured);
        if (r->messages.empty()) std::abort();
      }
      break;
    case 1:
      if (auto r = oa::parse_completion_request(body); r.ok()) check(r->common.structured);
      break;
    case 2:
      if (auto r = oa::parse_embedding_request(body); r.ok() && r->inputs.empty() == r->token_inputs.empty()) std::abort();
      break;
    case 3:
      if (auto r = oa::parse_responses_request(body); r.ok()) check(r->common.structured);
      break;
    case 4:
      if (auto r = an::parse_messages_request(body); r.ok() && !r->options.num_predict) std::abort();
      break;
    default:
      if (auto r = an::parse_count_tokens_request(body); r.ok()) check(r->structured);
      break;
  }
  return 0;
}
