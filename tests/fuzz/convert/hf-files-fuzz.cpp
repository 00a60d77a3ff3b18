// libFuzzer target for the readers of a checkpoint's small files. The first byte picks one:
//   0: a JSON document (config.json and the like) and its typed getters;
//   1: tokenizer.json → vocabulary and pre-tokenizer identification (the patterns come from the
//      input, so they are compiled and run on the probe texts);
//   2: tokenizer.model (SentencePiece ModelProto).
// Any input must give a result or an Error with a message, never a crash or a sanitizer report.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

#include "engine/convert/hf-json.h"
#include "engine/convert/hf-tokenizer.h"
#include "engine/convert/spm-model.h"

namespace {

template <typename T>
void check(const nurl::Result<T>& r) {
  if (!r.ok() && r.error().msg.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode == 0) {
    auto d = nurl::convert::JsonDoc::parse(text, "config.json");
    check(d);
    if (!d.ok()) return 0;
    for (const char* k : {"hidden_size", "num_hidden_layers", "vocab_size", "rope_theta", "architectures"}) {
      check(d->get_int(k, 1, 1 << 20));
      check(d->get_number_or(k, 1.0));
      check(d->get_bool_or(k, false));
      check(d->get_string_or(k, ""));
    }
  } else if (mode == 1) {
    if (size > 1 << 16) return 0;  // user-supplied regexes: keep each run short
    check(nurl::convert::identify_pre_tokenizer(text));
  } else {
    auto m = nurl::convert::parse_spm_model({data + 1, size - 1}, "tokenizer.model");
    check(m);
    if (m.ok() && m->pieces.empty()) std::abort();
  }
  return 0;
}
