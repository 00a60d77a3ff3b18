// load_model_chat: the chat template and BOS/EOS token texts of a GGUF model (kept apart from
// the renderer so the interpreter builds and fuzzes without the model stack).
#include "engine/chat/chat-template.h"
#include "engine/gguf/gguf.h"

namespace nurl::chat {

Result<ModelChat> load_model_chat(const gguf::File& f) {
  ModelChat mc;
  if (f.has("tokenizer.chat_template")) {
    NURL_ASSIGN(std::string src, f.get_string("tokenizer.chat_template"));
    auto t = ChatTemplate::parse(src);
    if (!t.ok()) return t.error().context(f.path() + ": tokenizer.chat_template");
    mc.chat_template = std::move(*t);
  }
  if (!f.has("tokenizer.ggml.tokens")) return mc;
  NURL_ASSIGN(const gguf::Array* tokens, f.get_array("tokenizer.ggml.tokens"));
  auto token_text = [&](const char* key, std::string& out) -> Result<void> {
    if (!f.has(key)) return ok();
    NURL_ASSIGN(uint32_t id, f.get_u32(key));
    if (id >= tokens->items.size())
      return Error(Code::corrupt, std::string(key) + " = " + std::to_string(id) + " is outside the vocabulary (" +
                                      std::to_string(tokens->items.size()) + " tokens)");
    const std::string* s = tokens->items[id].get_if<std::string>();
    if (!s) return Error(Code::corrupt, "tokenizer.ggml.tokens holds a non-string at " + std::to_string(id));
    out = *s;
    return ok();
  };
  NURL_TRY(token_text("tokenizer.ggml.bos_token_id", mc.bos_token));
  NURL_TRY(token_text("tokenizer.ggml.eos_token_id", mc.eos_token));
  return mc;
}

}  // namespace nurl::chat
