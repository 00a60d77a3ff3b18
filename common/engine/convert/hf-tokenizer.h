// A checkpoint's tokenizer → GGUF tokenizer.* metadata, as llama.cpp's converter writes it.
//  - SentencePiece (tokenizer.model present): tokenizer.ggml.model "llama", the pieces with their
//    scores and types, add_space_prefix from the normaliser.
//  - byte-level BPE (tokenizer.json with a BPE model): "gpt2", vocab + merges, and the
//    pre-tokenizer identified from the tokenizer itself: the regexes of tokenizer.json's
//    pre_tokenizer are run on probe texts and compared with each family we know.
// Both: added tokens from tokenizer.json / tokenizer_config.json (special → control, else
// user-defined), ids up to config.json's vocab_size padded with "[PAD<id>]", BOS/EOS/UNK/PAD ids
// (tokenizer_config.json's token texts, else config.json's ids), an EOT id from
// generation_config.json's end ids, add_bos/add_eos flags, and the chat template
// (tokenizer_config.json "chat_template", or chat_template.jinja).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/gguf/gguf.h"

namespace nurl::convert {

struct VocabOptions {
  int64_t vocab_size = 0;     // rows of the embedding: the vocabulary is padded to it
  bool pad_as_unknown = false;  // padding entries are UNKNOWN tokens (llama.cpp's phi3) instead of UNUSED
};

// The tokenizer.* keys (and tokenizer.chat_template*), in the order they are written.
Result<std::vector<gguf::KeyValue>> read_tokenizer(const std::filesystem::path& dir, const VocabOptions& opts);

// The pre-tokenizer family (tokenizer.ggml.pre) of a tokenizer.json text, for tests and fuzzing.
Result<std::string> identify_pre_tokenizer(const std::string& tokenizer_json_text);

}  // namespace nurl::convert
