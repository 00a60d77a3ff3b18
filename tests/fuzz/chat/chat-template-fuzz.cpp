// libFuzzer target: any bytes as a chat template, parsed and (when it parses) rendered against a
// conversation with every message shape, tools and extra variables, under tight limits. Findings
// are crashes, sanitizer reports, hangs and leaks; template errors are expected outcomes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/chat/chat-template.h"

namespace {

const nlohmann::ordered_json& context() {
  static const nlohmann::ordered_json ctx = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi é 🎉\n<b>"},
      {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": [1, 2.5, null, true]}}}]},
      {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "22C"},
      {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image"}]}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
    "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false})");
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  auto tmpl = nurl::chat::ChatTemplate::parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!tmpl.ok()) return 0;
  nurl::chat::RenderOptions opts;
  opts.clock = [] { return std::tm{}; };
  opts.limits.max_steps = 200'000;
  opts.limits.max_depth = 200;
  opts.limits.max_output = 1 << 20;
  opts.limits.max_heap = 16 << 20;
  (void)tmpl->render(context(), opts);
  nurl::chat::ChatOptions chat;
  chat.render = opts;
  chat.bos_token = "<s>";
  chat.strip_leading_bos = true;
  (void)nurl::chat::render_chat(*tmpl, context()["messages"], chat);
  return 0;
}
