// Fuzz target: arbitrary GGUF bytes -> Tokenizer::from_gguf, and when a tokenizer comes out, use
// it (encode fixed strings and the input's own bytes in both modes, render and stream every id).
// Hostile metadata (wrong types, lengths that disagree, ids out of range, odd token texts, NaN
// scores, merges without a space) must give an Error or a working tokenizer, never a crash.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/gguf/gguf.h"
#include "engine/tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = nurl::gguf::File::parse(std::span<const uint8_t>(data, size));
  if (!f.ok()) return 0;
  auto t = nurl::Tokenizer::from_gguf(*f);
  if (!t.ok()) return 0;
  const nurl::Tokenizer& tok = *t;
  const std::string tail(reinterpret_cast<const char*>(data), std::min<size_t>(size, 256));
  for (const std::string& text : {std::string("Hello world! <s>[INST] 3.14 caf\xC3\xA9 \xF0\x9F\x9A\x80\n\n  x"),
                                  std::string("<|im_start|>user\n</s><unk>"), tail}) {
    for (bool special : {false, true}) {
      const auto ids = tok.encode(text, special, special);
      for (int32_t id : ids)
        if (id < 0 || id >= tok.n_vocab()) __builtin_trap();
      (void)tok.decode(ids, special);
    }
  }
  const int32_t n = std::min(tok.n_vocab(), 2048);
  nurl::StreamDecoder sd(tok, true);
  std::string streamed, pieces;
  for (int32_t id = 0; id < n; ++id) {
    pieces += tok.token_to_piece(id, true);
    streamed += sd.push(id);
    (void)tok.token_text(id);
    (void)tok.is_eog(id);
  }
  streamed += sd.flush();
  if (streamed != pieces) __builtin_trap();
  return 0;
}
