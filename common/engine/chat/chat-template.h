// Chat templates: a model's `tokenizer.chat_template` (Jinja2) rendered exactly as Hugging Face
// transformers renders it (trim_blocks, lstrip_blocks, loop controls, `{% generation %}` as a
// pass-through, tojson with ensure_ascii=False and insertion-ordered keys, raise_exception,
// strftime_now). The interpreter is our own (engine/chat/jinja-*); nlohmann::json only carries
// the request context in.
//
// Invariants: parse() and render() never crash or hang on any input. Template errors come back
// as Error{invalid_argument} naming line and column; every render is bounded in steps, nesting,
// output size and memory (jinja::Limits). A parsed ChatTemplate is immutable and may be rendered
// from several threads at once.
//
// A model without a chat template is a base model: callers use the prompt as is and never
// invent turns (llama.cpp falls back to ChatML there; we do not).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine/chat/jinja-interp.h"

namespace nurl::gguf {
class File;
}

namespace nurl::chat {

using Clock = jinja::Clock;    // returns the local calendar time strftime_now() prints
using Limits = jinja::Limits;  // step / nesting / output / memory bounds of one render

struct RenderOptions {
  Clock clock;    // empty: the machine's local time at render
  Limits limits;  // defaults suit real templates with a wide margin
};

class ChatTemplate {
 public:
  // Parses (and probes) a template. Syntax errors name line and column.
  static Result<ChatTemplate> parse(std::string_view source);

  // Renders with `context` as the template's variables. It is an object, typically
  //   {"messages": [{"role", "content", "tool_calls"?, "tool_call_id"?, "name"?}...],
  //    "tools": [...], "add_generation_prompt": bool, "bos_token": "<s>", "eos_token": "</s>",
  //    and any extra variable such as "enable_thinking": false}.
  // ordered_json keeps the caller's key order, which tojson prints (a nlohmann::json converts
  // implicitly, with its keys sorted). Missing variables are Jinja "undefined".
  Result<std::string> render(const nlohmann::ordered_json& context, const RenderOptions& opts = {}) const;

  const std::string& source() const;

  // False when the template drops a system message or refuses one (raise_exception) while it
  // renders a plain user turn. Probed once at parse with marker strings.
  bool supports_system_role() const { return supports_system_role_; }

 private:
  struct Program;
  std::shared_ptr<const Program> program_;
  bool supports_system_role_ = true;
};

// What render_chat adds around the template, matching llama.cpp's chat rendering.
struct ChatOptions {
  bool add_generation_prompt = true;
  std::string bos_token;  // the vocab's BOS / EOS token texts, passed to the template
  std::string eos_token;
  // Set when the tokenizer adds BOS itself: a rendered BOS text at the very start is removed
  // (else the prompt would carry two). Same for a trailing EOS text when it adds EOS.
  bool strip_leading_bos = false;
  bool strip_trailing_eos = false;
  // null: no tools, and `tools` stays undefined in the template (templates such as Hermes-2-Pro
  // iterate `tools` unguarded; the reference renderings leave it undefined too).
  nlohmann::ordered_json tools;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();  // more variables; they win
  RenderOptions render;
};

// Renders `messages` (a JSON array) through the template. For a template without system-role
// support (supports_system_role() false) every system message is folded into the next user
// message as "<system text>\n<user text>" (consecutive system messages join with "\n"; a system
// message with no later user message becomes a user message) — llama.cpp's polyfill.
Result<std::string> render_chat(const ChatTemplate& tmpl, const nlohmann::ordered_json& messages,
                                const ChatOptions& opts);

// The chat pieces of a GGUF model: its template (nullopt for a base model) and the BOS/EOS token
// texts from tokenizer.ggml.tokens at tokenizer.ggml.{bos,eos}_token_id (empty when absent).
struct ModelChat {
  std::optional<ChatTemplate> chat_template;
  std::string bos_token;
  std::string eos_token;
};
Result<ModelChat> load_model_chat(const gguf::File& f);

}  // namespace nurl::chat
