// nurl-scripted-model BASE.gguf OUT.gguf TEXT [--loop]
//
// Writes a real qwen2 GGUF (the base file's tokenizer, chat template and tensor shapes) whose
// weights make the model answer every chat with exactly TEXT and then end its turn — or, with
// --loop, repeat TEXT until the context is full. The engine runs it like any other model, so the
// end-to-end tests can make a real reply say something precise (HTML that must render as text,
// a reply long enough to stop).
//
// How: the model is a lookup table from the current token to the next. TEXT is split as the
// tokenizer splits it, and piece k of it is given its own token: one of the vocabulary's unused
// [PAD] entries, renamed to that piece (so a piece may repeat without repeating a token; the
// tokenizer keeps encoding text with the original ids, which come first). Chain token k gets the
// embedding e_k (one-hot in dimension k); every other embedding is zero. Attention writes
// nothing (attn_output = 0), so a position's state is its own embedding; layer 0's feed-forward
// maps e_k to 10·e_{k+1} − e_k (hidden unit k: gate and up read dimension k, down writes k+1 and
// k). The tied output matrix then scores token k+1 ≈ +34, token k ≈ −3.4 and every other token 0,
// so sampling at any usual temperature picks k+1. The chain starts at the last token of the
// assistant header ("\n") and ends with <|im_end|>.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/gguf/gguf-writer.h"
#include "engine/gguf/gguf.h"
#include "engine/quant/quant.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl {
namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "nurl-scripted-model: %s\n", msg.c_str());
  return 1;
}

// GPT-2's byte-level alphabet: how a byte-level BPE vocabulary (tokenizer.ggml.model "gpt2")
// stores the bytes of a piece.
std::string byte_level(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    uint32_t cp = b;
    if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
      uint32_t n = 0;  // the bytes outside those ranges map to 256, 257, … in byte order
      for (uint32_t c = 0; c < b; ++c)
        if (!((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174)) ++n;
      cp = 256 + n;
    }
    if (cp < 0x80) out += char(cp);
    else {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

std::vector<uint8_t> encode_rows(GgmlType type, const std::vector<float>& f32, uint64_t row_len) {
  const QuantTraits* q = quant_traits(type);
  const uint64_t n_rows = f32.size() / row_len;
  const uint64_t row_bytes = nurl::row_bytes(type_info(type), row_len);
  std::vector<uint8_t> out(row_bytes * n_rows);
  for (uint64_t r = 0; r < n_rows; ++r) q->quantize_row(f32.data() + r * row_len, out.data() + r * row_bytes, int64_t(row_len));
  return out;
}

int run(int argc, char** argv) {
  if (argc < 4) return fail("usage: nurl-scripted-model BASE.gguf OUT.gguf TEXT [--loop]");
  const std::string base_path = argv[1], out_path = argv[2], text = argv[3];
  const bool loop = argc > 4 && std::strcmp(argv[4], "--loop") == 0;
  auto base = gguf::File::open(base_path);
  if (!base.ok()) return fail(base.error().msg);
  auto arch = base->get_string("general.architecture");
  if (!arch.ok() || *arch != "qwen2") return fail("the base must be a qwen2 model");
  auto tok = Tokenizer::from_gguf(*base);
  if (!tok.ok()) return fail(tok.error().msg);
  auto n_embd = base->get_u32("qwen2.embedding_length");
  auto n_ff = base->get_u32("qwen2.feed_forward_length");
  if (!n_embd.ok() || !n_ff.ok()) return fail("base: no embedding_length / feed_forward_length");

  const auto start = tok->find_token(std::string("\xC4\x8A"));  // "\n" in the byte-level alphabet
  const int32_t eos = tok->eos();
  if (!start || eos < 0) return fail("base: no newline token or no eos");

  if (tok->model() != TokenizerModel::bpe) return fail("the base must have a byte-level BPE vocabulary");
  // The vocabulary's unused entries, from the end: one per piece of the text.
  std::vector<int32_t> spare;
  for (int32_t id = tok->n_vocab() - 1; id >= 0; --id)
    if (tok->token_type(id) == TokenType::unused) spare.push_back(id);
  std::vector<std::string> pieces;
  for (int32_t id : tok->encode(text, false, false)) pieces.push_back(tok->token_to_piece(id, false));
  if (pieces.size() > spare.size()) return fail("the base has only " + std::to_string(spare.size()) + " unused tokens");
  std::vector<int32_t> chain{*start};
  for (size_t k = 0; k < pieces.size(); ++k) chain.push_back(spare[k]);
  if (!loop) chain.push_back(eos);
  const uint64_t d = *n_embd, ff = *n_ff;
  if (chain.size() + 1 > d || chain.size() > ff) return fail("the text is too long for this model (" +
                                                             std::to_string(chain.size()) + " tokens)");

  // Embeddings: e_k for chain token k (the loop's last token leads back to token 1).
  const uint64_t n_vocab = static_cast<uint64_t>(tok->n_vocab());
  std::vector<float> emb(n_vocab * d, 0.0f);
  for (size_t k = 0; k < chain.size(); ++k) emb[uint64_t(chain[k]) * d + k] = 1.0f;
  // Layer 0 feed-forward: unit k reads dimension k and writes k → k+1.
  std::vector<float> gate(ff * d, 0.0f), up(ff * d, 0.0f), down(d * ff, 0.0f);
  const float u = std::sqrt(float(d));  // dimension k after the RMS norm of e_k
  for (size_t k = 0; k < chain.size(); ++k) {
    const bool last = k + 1 == chain.size();
    if (last && !loop) break;  // <|im_end|> ends the reply; its row never needs a successor
    const size_t next = last ? 1 : k + 1;
    gate[k * d + k] = 1.0f;
    up[k * d + k] = 1.0f;
    const float act = u * u;  // silu(u)·u ≈ u² for u ≈ 11
    down[next * ff + k] = 10.0f / act;
    down[k * ff + k] = -2.0f / act;
  }

  gguf::Writer w;
  for (const auto& kv : base->metadata()) {
    gguf::Value v = kv.value;
    auto* arr = std::get_if<gguf::Array>(&v.v);
    if (arr && (kv.key == "tokenizer.ggml.tokens" || kv.key == "tokenizer.ggml.token_type")) {
      for (size_t k = 0; k < pieces.size(); ++k) {
        auto& item = arr->items.at(static_cast<size_t>(spare[k]));
        if (kv.key == "tokenizer.ggml.tokens") item = gguf::Value{gguf::Value::Storage(byte_level(pieces[k]))};
        else item = gguf::Value{gguf::Value::Storage(int32_t(TokenType::normal))};
      }
    }
    w.add(kv.key, std::move(v));
  }
  w.set("general.name", gguf::Value{gguf::Value::Storage(std::string("scripted"))});
  std::vector<std::vector<uint8_t>> keep;
  for (const auto& t : base->tensors()) {
    const uint64_t row = t.ne[0];
    std::vector<float> f(t.n_elements, 0.0f);
    const std::string& n = t.name;
    auto ends = [&](const char* s) { return n.size() >= std::strlen(s) && n.compare(n.size() - std::strlen(s), std::string::npos, s) == 0; };
    if (n == "token_embd.weight") f = emb;
    else if (n == "blk.0.ffn_gate.weight") f = gate;
    else if (n == "blk.0.ffn_up.weight") f = up;
    else if (n == "blk.0.ffn_down.weight") f = down;
    else if (n == "output_norm.weight") std::fill(f.begin(), f.end(), 3.0f);
    else if (ends("_norm.weight")) std::fill(f.begin(), f.end(), 1.0f);
    if (f.size() != t.n_elements) return fail("unexpected shape of " + n);
    if (!quant_traits(t.type) || !quant_traits(t.type)->quantize_row) return fail("cannot write type of " + n);
    keep.push_back(encode_rows(t.type, f, row));
    std::vector<uint64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    w.add_tensor(n, t.type, std::span<const uint64_t>(ne), keep.back());
  }
  if (auto r = w.write_to_file(out_path); !r.ok()) return fail(r.error().msg);
  std::printf("%s: %zu chain tokens%s\n", out_path.c_str(), chain.size(), loop ? " (looping)" : "");
  return 0;
}

}  // namespace
}  // namespace nurl

int main(int argc, char** argv) { return nurl::run(argc, argv); }
