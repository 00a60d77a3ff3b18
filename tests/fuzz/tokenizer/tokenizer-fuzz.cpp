// Fuzz target: random bytes into encode (both special-parsing modes) and random ids into
// decode / token_to_piece / StreamDecoder, for one tokenizer of each model kind. Besides "never
// crash", it checks properties that must hold for any input:
//   - every id encode returns is in [0, n_vocab);
//   - on valid UTF-8, SentencePiece (without a literal ▁ in the input) and byte-level BPE without
//     the detokenizer's space clean-up (Qwen) give the input back: decode(encode(x, false, false), true) == x;
//   - the stream decoder's output, concatenated, equals the concatenated pieces.
// The first input byte picks the tokenizer and mode; the rest is the text (or the id list).
// Vocabularies are chosen to cover every code path at a modest load time under ASan (Gemma 3's
// 262k pieces would add ~10 s; its paths are SentencePiece + user-defined pieces, both covered).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "core/utf8.h"
#include "engine/gguf/gguf.h"
#include "engine/tokenizer/tokenizer.h"

namespace {

constexpr const char* kFiles[] = {
    "vocab/ggml-vocab-llama-spm.gguf",     // SentencePiece with space prefix
    "vocab/ggml-vocab-phi-3.gguf",         // SentencePiece, specials that strip whitespace
    "models/qwen2-F16-embQ4_0.gguf",       // byte-level BPE, qwen2 pattern, no clean-up
    "vocab/ggml-vocab-deepseek-llm.gguf",  // six-pattern pre-tokenizer
    "vocab/ggml-vocab-gpt-neox.gguf",      // default pre-tokenizer, user-defined space runs
    "vocab/ggml-vocab-bert-bge.gguf",      // WordPiece
};
constexpr size_t kNumFiles = sizeof(kFiles) / sizeof(kFiles[0]);

std::string testdata_dir() {
  if (const char* e = std::getenv("NURL_TESTDATA"); e && *e) return e;
  return NURL_TESTDATA;
}

// All loaded by LLVMFuzzerInitialize (so no input pays for a load and trips -timeout).
const nurl::Tokenizer& tokenizer(size_t which) {
  static std::unique_ptr<nurl::Tokenizer> toks[kNumFiles];
  if (!toks[which]) {
    const auto t0 = std::chrono::steady_clock::now();
    auto f = nurl::gguf::File::open(testdata_dir() + "/" + kFiles[which]);
    if (!f.ok()) {
      std::fprintf(stderr, "tokenizer fuzz: %s: %s\n", kFiles[which], f.error().msg.c_str());
      std::abort();
    }
    auto t = nurl::Tokenizer::from_gguf(*f);
    if (!t.ok()) {
      std::fprintf(stderr, "tokenizer fuzz: %s: %s\n", kFiles[which], t.error().msg.c_str());
      std::abort();
    }
    toks[which] = std::make_unique<nurl::Tokenizer>(std::move(*t));
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0);
    std::fprintf(stderr, "tokenizer fuzz: loaded %s in %.0f ms\n", kFiles[which], ms.count());
  }
  return *toks[which];
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tokenizer fuzz: property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  for (size_t i = 0; i < kNumFiles; ++i) tokenizer(i);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t which = data[0] % kNumFiles;
  const int mode = static_cast<int>((data[0] / kNumFiles) % 3);
  const nurl::Tokenizer& tok = tokenizer(which);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  if (mode < 2) {
    const bool parse_special = mode == 1;
    const auto ids = tok.encode(text, /*add_special=*/parse_special, parse_special);
    for (int32_t id : ids) check(id >= 0 && id < tok.n_vocab(), "id out of range");
    if (!parse_special) {
      // (Invalid UTF-8 is not lossless in SentencePiece: a bad lead byte swallows the next bytes
      // into one symbol, possibly half of a ▁, exactly as in llama.cpp.)
      const bool valid = nurl::utf8::valid(text);
      const bool spm_lossless = tok.model() == nurl::TokenizerModel::spm && valid &&
                                text.find("\xE2\x96\x81") == std::string::npos;
      const bool bpe_lossless =
          tok.model() == nurl::TokenizerModel::bpe && !tok.clean_spaces() && valid;
      if (spm_lossless || bpe_lossless) check(tok.decode(ids, true) == text, "round trip");
    }
    return 0;
  }

  // Ids: little-endian 24-bit values, so both in-range and out-of-range ids occur.
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 3 <= text.size(); i += 3) {
    const auto* p = reinterpret_cast<const uint8_t*>(text.data() + i);
    ids.push_back(static_cast<int32_t>(p[0] | (p[1] << 8) | (p[2] << 16)) - 4096);
  }
  std::string pieces;
  for (int32_t id : ids) pieces += tok.token_to_piece(id, true);
  nurl::StreamDecoder sd(tok, true);
  std::string streamed;
  for (int32_t id : ids) streamed += sd.push(id);
  streamed += sd.flush();
  check(streamed == pieces, "stream == pieces");
  (void)tok.decode(ids, false);
  for (int32_t id : ids) (void)tok.is_eog(id);
  return 0;
}
