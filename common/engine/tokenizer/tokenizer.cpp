// Tokenizer: loading from GGUF metadata, the special-token splitter, encode/decode dispatch,
// the streaming decoder. The three model encoders live in spm.cpp, bpe.cpp and wordpiece.cpp.
//
// Encoding runs in two stages, as in llama.cpp: (1) special-token texts are cut out of the input
// (control and unknown tokens only with parse_special; user-defined tokens always), longest token
// first; (2) each remaining text fragment goes through the model's encoder.
#include "engine/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstring>

#include "core/utf8.h"
#include "engine/gguf/gguf.h"
#include "engine/tokenizer/tokenizer-impl.h"

namespace nurl {

using tokenizer_detail::TokenData;

std::string_view token_type_name(TokenType t) {
  switch (t) {
    case TokenType::undefined: return "undefined";
    case TokenType::normal: return "normal";
    case TokenType::unknown: return "unknown";
    case TokenType::control: return "control";
    case TokenType::user_defined: return "user_defined";
    case TokenType::unused: return "unused";
    case TokenType::byte: return "byte";
  }
  return "?";
}

std::string_view tokenizer_model_name(TokenizerModel m) {
  switch (m) {
    case TokenizerModel::spm: return "llama";
    case TokenizerModel::bpe: return "gpt2";
    case TokenizerModel::wpm: return "bert";
  }
  return "?";
}

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // ▁, SentencePiece's visible space

bool is_special_type(TokenType t) {
  return t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown;
}

// Texts llama.cpp uses to find end-of-turn / FIM tokens that the file does not name, and the
// texts that make a token end generation. Matching tokens become control tokens.
constexpr std::string_view kEotTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
    "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>", "<end_of_utterance>"};
constexpr std::string_view kEomTexts[] = {"<|eom_id|>"};
constexpr std::string_view kFimPreTexts[] = {"<|fim_prefix|>", "<fim-prefix>", "<｜fim▁begin｜>",
                                             "<PRE>", "▁<PRE>", "<|code_prefix|>"};
constexpr std::string_view kFimSufTexts[] = {"<|fim_suffix|>", "<fim-suffix>", "<｜fim▁hole｜>",
                                             "<SUF>", "▁<SUF>", "<|code_suffix|>"};
constexpr std::string_view kFimMidTexts[] = {"<|fim_middle|>", "<fim-middle>", "<｜fim▁end｜>",
                                             "<MID>", "▁<MID>", "<|code_middle|>"};
constexpr std::string_view kFimPadTexts[] = {"<|fim_pad|>", "<fim-pad>", "<PAD>"};
constexpr std::string_view kFimRepTexts[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>",
                                             "<REPO>"};
constexpr std::string_view kFimSepTexts[] = {"<|file_sep|>"};
constexpr std::string_view kEogTexts[] = {
    "<|eot_id|>", "<|im_end|>",      "<|end|>",           "<|return|>", "<|call|>",
    "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",       "<EOT>",      "_<EOT>",
    "<|end_of_text|>", "<end_of_utterance>", "</s>", "<eos>"};

// Reads an optional array of numbers; an error when present with another length or type.
Result<std::vector<double>> optional_numbers(const gguf::File& f, std::string_view key,
                                             size_t n) {
  std::vector<double> out;
  if (!f.has(key)) return out;
  NURL_ASSIGN(const gguf::Array* arr, f.get_array(key));
  if (arr->items.size() != n)
    return Error(Code::corrupt, std::string(key) + " has " + std::to_string(arr->items.size()) +
                                    " entries, tokenizer.ggml.tokens has " + std::to_string(n));
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    auto v = arr->items[i].as_number();
    if (!v) return Error(Code::corrupt, std::string(key) + "[" + std::to_string(i) + "] is not a number");
    out.push_back(*v);
  }
  return out;
}

Result<std::vector<std::string_view>> string_array(const gguf::File& f, std::string_view key) {
  NURL_ASSIGN(const gguf::Array* arr, f.get_array(key));
  std::vector<std::string_view> out;
  out.reserve(arr->items.size());
  for (size_t i = 0; i < arr->items.size(); ++i) {
    const auto* s = arr->items[i].get_if<std::string>();
    if (s == nullptr)
      return Error(Code::corrupt, std::string(key) + "[" + std::to_string(i) + "] is not a string");
    out.emplace_back(*s);
  }
  return out;
}

// The piece a token renders to when special tokens are rendered.
std::string make_piece(const Tokenizer::Impl& t, const TokenData& d) {
  switch (d.type) {
    case TokenType::control:
    case TokenType::unknown:
    case TokenType::user_defined:
      return d.text;
    case TokenType::normal: {
      if (t.model == TokenizerModel::bpe) {
        std::string out;
        tokenizer_detail::bpe_text_to_bytes(d.text, out);
        return out;
      }
      std::string out;
      for (size_t i = 0; i < d.text.size();) {
        if (d.text.compare(i, kSpace.size(), kSpace) == 0) {
          out += ' ';
          i += kSpace.size();
        } else {
          out += d.text[i++];
        }
      }
      return out;
    }
    case TokenType::byte: {
      if (t.model == TokenizerModel::bpe) return {};
      // <0xNN>
      if (d.text.size() == 6 && d.text.compare(0, 3, "<0x") == 0 && d.text[5] == '>') {
        const std::string hex = d.text.substr(3, 2);
        char* end = nullptr;
        const long v = std::strtol(hex.c_str(), &end, 16);
        if (end == hex.c_str() + 2) return std::string(1, static_cast<char>(v));
      }
      return {};
    }
    case TokenType::undefined:
    case TokenType::unused:
      return {};
  }
  return {};
}

void set_special_id(const gguf::File& f, std::string_view key, int32_t n_vocab, int32_t& id) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return;
  auto x = v->as_int();
  if (x && *x >= 0 && *x < n_vocab) id = static_cast<int32_t>(*x);  // else: keep the default
}

}  // namespace

// A 256-way byte trie over the special-token texts, to find which of them occur in a text
// without scanning the text once per special token (Gemma 3 has thousands).
struct SpecialTrie {
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;
    int32_t token = -1;
  };
  std::vector<Node> nodes{Node{}};
  std::array<int32_t, 256> root{};

  SpecialTrie() { root.fill(-1); }
  int32_t child(int32_t n, uint8_t b) const {
    if (n == 0) return root[b];
    for (auto [c, i] : nodes[n].children)
      if (c == b) return i;
    return -1;
  }
  void insert(std::string_view s, int32_t token) {
    int32_t n = 0;
    for (const char ch : s) {
      const auto b = static_cast<uint8_t>(ch);
      int32_t c = child(n, b);
      if (c < 0) {
        c = static_cast<int32_t>(nodes.size());
        nodes.emplace_back();
        if (n == 0) {
          root[b] = c;
        } else {
          nodes[n].children.emplace_back(b, c);
        }
      }
      n = c;
    }
    nodes[n].token = token;
  }
};

// The trie lives next to the Impl (kept out of the internal header: only this file uses it).
struct SpecialIndex {
  SpecialTrie trie;
  std::vector<int32_t> rank;  // per id: position in special_order, or -1
};

namespace {

struct Fragment {
  int32_t token;  // >= 0: a special token; -1: text [begin, end)
  size_t begin, end;
};

bool ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

}  // namespace

// Impl plus what only this file needs.
struct ImplWithIndex : Tokenizer::Impl {
  SpecialIndex index;
};

namespace {

// Cuts special-token texts out of `text` exactly as llama.cpp does: for each special token in
// priority order (longest text first), every occurrence inside a still-unclaimed text fragment
// (left to right, non-overlapping) becomes that token. lstrip/rstrip tokens also swallow
// adjacent ASCII whitespace.
std::vector<Fragment> partition(const ImplWithIndex& t, std::string_view text, bool parse_special) {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});

  // Which special tokens occur at all?
  std::vector<int32_t> present;
  const auto& trie = t.index.trie;
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t n = trie.root[static_cast<uint8_t>(text[i])];
    for (size_t j = i + 1; n >= 0; ++j) {
      const int32_t tok = trie.nodes[n].token;
      if (tok >= 0) {
        const TokenType type = t.tokens[tok].type;
        if (parse_special || type == TokenType::user_defined) present.push_back(t.index.rank[tok]);
      }
      if (j >= text.size()) break;
      n = trie.child(n, static_cast<uint8_t>(text[j]));
    }
  }
  if (present.empty()) return frags;
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());

  std::vector<Fragment> next;
  for (const int32_t r : present) {
    const int32_t id = t.special_order[r];
    const TokenData& d = t.tokens[id];
    next.clear();
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      size_t begin = f.begin;
      const size_t end = f.end;
      while (begin < end) {
        const size_t m = text.substr(0, end).find(d.text, begin);
        if (m == std::string_view::npos) break;
        size_t left_end = m;
        if (d.lstrip)
          while (left_end > begin && ascii_space(text[left_end - 1])) --left_end;
        if (left_end > begin) next.push_back({-1, begin, left_end});
        next.push_back({id, m, m + d.text.size()});
        begin = m + d.text.size();
        if (d.rstrip)
          while (begin < end && ascii_space(text[begin])) ++begin;
      }
      if (begin < end) next.push_back({-1, begin, end});
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace

Result<Tokenizer> Tokenizer::from_gguf(const gguf::File& f) {
  auto impl = std::make_shared<ImplWithIndex>();
  Impl& t = *impl;

  NURL_ASSIGN(const std::string model, f.get_string("tokenizer.ggml.model"));
  if (model == "llama") {
    t.model = TokenizerModel::spm;
  } else if (model == "gpt2") {
    t.model = TokenizerModel::bpe;
  } else if (model == "bert") {
    t.model = TokenizerModel::wpm;
  } else if (model == "no_vocab" || model == "none") {
    return Error(Code::unsupported, "tokenizer.ggml.model is '" + model + "': the file has no vocabulary");
  } else {
    return Error(Code::unsupported, "tokenizer.ggml.model '" + model +
                                        "' is not supported (supported: llama (SentencePiece), "
                                        "gpt2 (byte-level BPE), bert (WordPiece))");
  }

  NURL_ASSIGN(const auto texts, string_array(f, "tokenizer.ggml.tokens"));
  const size_t n = texts.size();
  if (n == 0) return Error(Code::corrupt, "tokenizer.ggml.tokens is empty");
  if (n > static_cast<size_t>(INT32_MAX))
    return Error(Code::corrupt, "tokenizer.ggml.tokens has too many entries");
  NURL_ASSIGN(const auto scores, optional_numbers(f, "tokenizer.ggml.scores", n));
  NURL_ASSIGN(const auto types, optional_numbers(f, "tokenizer.ggml.token_type", n));
  const auto n_vocab = static_cast<int32_t>(n);

  t.tokens.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TokenData& d = t.tokens[i];
    d.text.assign(texts[i]);
    d.score = scores.empty() ? 0.0f : static_cast<float>(scores[i]);
    const double ty = types.empty() ? 1.0 : types[i];
    d.type = (ty >= 0 && ty <= 6) ? static_cast<TokenType>(static_cast<int>(ty)) : TokenType::undefined;
  }
  t.token_to_id.build(n, [&](size_t id) -> std::string_view { return t.tokens[id].text; });
  if (t.model == TokenizerModel::spm) {
    auto& glue = t.spm_glue_before_space;
    for (const TokenData& d : t.tokens) {
      const std::string_view s = d.text;
      for (size_t p = s.find(kSpace, 1); p != std::string_view::npos; p = s.find(kSpace, p + 1)) {
        size_t b = p - 1;
        while (b > 0 && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) --b;
        size_t j = b;
        const char32_t c = utf8::decode(s, j);
        if (j == p) glue.push_back(c);
      }
    }
    std::sort(glue.begin(), glue.end());
    glue.erase(std::unique(glue.begin(), glue.end()), glue.end());
  }

  NURL_ASSIGN(std::string pre, f.get_string_or("tokenizer.ggml.pre", ""));
  if (pre.empty() && t.model == TokenizerModel::bpe) pre = "default";
  switch (t.model) {
    case TokenizerModel::spm:
      t.bos = 1, t.eos = 2, t.unk = 0;
      t.add_space_prefix = true, t.clean_spaces = false, t.add_bos = true;
      t.pre = pre.empty() ? "default" : pre;
      break;
    case TokenizerModel::bpe: {
      t.bos = 11, t.eos = 11;
      auto p = tokenizer_detail::PreTokenizer::create(pre);
      if (!p.ok()) return p.error();
      t.pre_tokenizer = *p;
      t.pre = pre.empty() ? "default" : pre;
      t.clean_spaces = t.pre_tokenizer->traits().clean_spaces;
      t.ignore_merges = t.pre_tokenizer->traits().ignore_merges;
      t.add_bos = t.pre_tokenizer->traits().add_bos;
      break;
    }
    case TokenizerModel::wpm:
      t.bos = 101, t.unk = 100, t.sep = 102, t.pad = 0, t.mask = 103;
      t.add_bos = true, t.add_sep = true, t.clean_spaces = true;
      t.pre = pre.empty() ? "default" : pre;
      break;
  }
  for (int32_t* id : {&t.bos, &t.eos, &t.unk, &t.sep, &t.pad, &t.mask})
    if (*id >= n_vocab) *id = -1;

  NURL_ASSIGN(t.add_space_prefix, f.get_bool_or("tokenizer.ggml.add_space_prefix", t.add_space_prefix));
  NURL_ASSIGN(t.add_bos, f.get_bool_or("tokenizer.ggml.add_bos_token", t.add_bos));
  NURL_ASSIGN(t.add_eos, f.get_bool_or("tokenizer.ggml.add_eos_token", t.add_eos));
  NURL_ASSIGN(t.add_sep, f.get_bool_or("tokenizer.ggml.add_sep_token", t.add_sep));

  const std::pair<std::string_view, int32_t*> keyed[] = {
      {"tokenizer.ggml.bos_token_id", &t.bos},      {"tokenizer.ggml.eos_token_id", &t.eos},
      {"tokenizer.ggml.eot_token_id", &t.eot},      {"tokenizer.ggml.eom_token_id", &t.eom},
      {"tokenizer.ggml.unknown_token_id", &t.unk},  {"tokenizer.ggml.seperator_token_id", &t.sep},
      {"tokenizer.ggml.padding_token_id", &t.pad},  {"tokenizer.ggml.mask_token_id", &t.mask},
      {"tokenizer.ggml.prefix_token_id", &t.fim_pre}, {"tokenizer.ggml.suffix_token_id", &t.fim_suf},
      {"tokenizer.ggml.middle_token_id", &t.fim_mid}, {"tokenizer.ggml.fim_pre_token_id", &t.fim_pre},
      {"tokenizer.ggml.fim_suf_token_id", &t.fim_suf}, {"tokenizer.ggml.fim_mid_token_id", &t.fim_mid},
      {"tokenizer.ggml.fim_pad_token_id", &t.fim_pad}, {"tokenizer.ggml.fim_rep_token_id", &t.fim_rep},
      {"tokenizer.ggml.fim_sep_token_id", &t.fim_sep},
  };
  for (auto [key, id] : keyed) set_special_id(f, key, n_vocab, *id);

  // SentencePiece byte fallback pieces.
  t.byte_token.fill(-1);
  if (t.model != TokenizerModel::bpe) {
    for (int b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "<0x%02X>", b);
      int32_t id = t.find(buf);
      if (id < 0) id = t.find(std::string(1, static_cast<char>(b)));
      t.byte_token[b] = id;
    }
  }

  if (t.model == TokenizerModel::bpe) {
    if (!f.has("tokenizer.ggml.merges"))
      return Error(Code::corrupt, "tokenizer.ggml.merges is missing (required for a gpt2 tokenizer)");
    NURL_ASSIGN(const auto merges, string_array(f, "tokenizer.ggml.merges"));
    NURL_TRY(tokenizer_detail::bpe_build(t, merges));
  }

  // Tokens the file does not name but whose text says what they are (llama.cpp's rules). When
  // several texts match, the highest id is taken. The chosen tokens become control tokens.
  auto detect = [&](int32_t& slot, auto& list) {
    if (slot >= 0) return;
    for (std::string_view text : list) slot = std::max(slot, t.find(text));
    if (slot >= 0) t.tokens[slot].type = TokenType::control;
  };
  detect(t.eot, kEotTexts);
  detect(t.eom, kEomTexts);
  detect(t.fim_pre, kFimPreTexts);
  detect(t.fim_suf, kFimSufTexts);
  detect(t.fim_mid, kFimMidTexts);
  detect(t.fim_pad, kFimPadTexts);
  detect(t.fim_rep, kFimRepTexts);
  detect(t.fim_sep, kFimSepTexts);

  // End of generation.
  t.eog_flag.assign(n, 0);
  for (int32_t id : {t.fim_pad, t.fim_rep, t.fim_sep, t.eos, t.eot, t.eom})
    if (id >= 0) t.eog_flag[id] = 1;
  for (std::string_view text : kEogTexts)
    if (const int32_t id = t.find(text); id >= 0) {
      t.eog_flag[id] = 1;
      t.tokens[id].type = TokenType::control;
    }
  for (int32_t id = 0; id < n_vocab; ++id)
    if (t.eog_flag[id]) t.eog.push_back(id);

  // Special tokens, longest text first (ties: lower id first).
  for (int32_t id = 0; id < n_vocab; ++id)
    if (is_special_type(t.tokens[id].type) && !t.tokens[id].text.empty()) t.special_order.push_back(id);
  std::stable_sort(t.special_order.begin(), t.special_order.end(), [&](int32_t a, int32_t b) {
    return t.tokens[a].text.size() > t.tokens[b].text.size();
  });

  // Per-token strip flags llama.cpp sets by model name (they are not in GGUF files).
  NURL_ASSIGN(std::string name, f.get_string_or("general.name", ""));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  NURL_ASSIGN(const std::string arch, f.get_string_or("general.architecture", ""));
  auto set_flag = [&](std::string_view text, bool TokenData::*flag, bool v) {
    if (const int32_t id = t.find(text); id >= 0) t.tokens[id].*flag = v;
  };
  const bool jina = pre.find("jina-v2-de") != std::string::npos ||
                    pre.find("jina-v2-es") != std::string::npos ||
                    pre.find("jina-v2-code") != std::string::npos ||
                    arch.find("nomic-bert-moe") != std::string::npos ||
                    arch.find("jina-bert-v3") != std::string::npos;
  if (jina) {
    set_flag("<mask>", &TokenData::lstrip, true);
  } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    // Phi-3: special tokens swallow the whitespace after them (e.g. "<|user|>\n").
    for (int32_t id : t.special_order) t.tokens[id].rstrip = true;
    set_flag("</s>", &TokenData::rstrip, true);
    for (std::string_view s : {"<unk>", "<s>", "<|endoftext|>"}) set_flag(s, &TokenData::rstrip, false);
  }

  auto& index = impl->index;
  index.rank.assign(n, -1);
  for (size_t r = 0; r < t.special_order.size(); ++r) {
    const int32_t id = t.special_order[r];
    index.rank[id] = static_cast<int32_t>(r);
    index.trie.insert(t.tokens[id].text, id);
  }

  t.pieces.resize(n);
  for (size_t i = 0; i < n; ++i) {
    t.pieces[i] = make_piece(t, t.tokens[i]);
    t.max_token_len = std::max(t.max_token_len, t.tokens[i].text.size());
  }
  return Tokenizer(std::shared_ptr<const Impl>(std::move(impl)));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
  const auto& t = static_cast<const ImplWithIndex&>(*impl_);
  const std::vector<Fragment> frags = partition(t, text, parse_special);
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  switch (t.model) {
    case TokenizerModel::spm: {
      if (add_special && t.add_bos && t.bos >= 0) out.push_back(t.bos);
      bool prev_special = true;  // the first fragment gets the space prefix too
      std::string buf;
      for (const Fragment& fr : frags) {
        if (fr.token >= 0) {
          out.push_back(fr.token);
          prev_special = true;
          continue;
        }
        buf.clear();
        if (t.add_space_prefix && prev_special) buf += kSpace;
        for (size_t i = fr.begin; i < fr.end; ++i) {
          if (text[i] == ' ') {
            buf += kSpace;
          } else {
            buf += text[i];
          }
        }
        tokenizer_detail::spm_encode(t, buf, out);
        prev_special = false;
      }
      if (add_special && t.add_eos && t.eos >= 0) out.push_back(t.eos);
      break;
    }
    case TokenizerModel::bpe: {
      if (add_special && t.add_bos && t.bos >= 0) out.push_back(t.bos);
      for (const Fragment& fr : frags) {
        if (fr.token >= 0) {
          out.push_back(fr.token);
        } else {
          tokenizer_detail::bpe_encode(t, text.substr(fr.begin, fr.end - fr.begin), out);
        }
      }
      if (add_special && t.add_eos && t.eos >= 0) out.push_back(t.eos);
      break;
    }
    case TokenizerModel::wpm: {
      if (add_special && t.bos >= 0) out.push_back(t.bos);
      for (const Fragment& fr : frags) {
        if (fr.token >= 0) {
          out.push_back(fr.token);
        } else {
          tokenizer_detail::wpm_encode(t, text.substr(fr.begin, fr.end - fr.begin), out);
        }
      }
      if (add_special && t.sep >= 0) out.push_back(t.sep);
      break;
    }
  }
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  const Impl& t = *impl_;
  if (id < 0 || id >= n_vocab()) return {};
  const TokenType type = t.tokens[id].type;
  if (!render_special && (type == TokenType::control || type == TokenType::unknown)) return {};
  return t.pieces[id];
}

namespace {

// llama.cpp's detokenizer clean-up for tokenizers trained on text with " ," style spacing. Three
// in-place passes over the bytes (each reads the previous pass's output at i-1, i, i+1 while
// writing at w <= i): drop the space before ? ! . ,; turn " ' " into "'"; drop the space before
// 's 'm 're 've.
void clean_up_spaces(std::string& s) {
  size_t n = s.size(), w = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const char x = s[i];
    if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --w;
    s[w++] = x;
  }
  n = w, w = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const char x = s[i];
    if (x == '\'' && i + 1 < n && s[i - 1] == ' ' && s[i + 1] == ' ') {
      --w;
      s[++i] = '\0';  // the space after the quote is skipped
    }
    s[w++] = x;
  }
  n = w, w = n ? 1 : 0;
  for (size_t i = 1; i < n; ++i) {
    const char x = s[i];
    if (s[i - 1] == ' ' && x == '\'' && i + 1 < n) {
      const char x1 = s[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --w;
      } else if (i + 2 < n && ((x1 == 'r' && s[i + 2] == 'e') || (x1 == 'v' && s[i + 2] == 'e'))) {
        --w;
      }
    }
    s[w++] = x;
  }
  s.resize(w);
}

}  // namespace

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  const Impl& t = *impl_;
  std::string out;
  bool strip_space = t.add_space_prefix;
  for (const int32_t id : ids) {
    std::string piece = token_to_piece(id, render_special);
    if (strip_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    strip_space = false;
    out += piece;
  }
  if (t.clean_spaces) clean_up_spaces(out);
  return out;
}

int32_t Tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->tokens.size()); }
TokenizerModel Tokenizer::model() const { return impl_->model; }
const std::string& Tokenizer::pre() const { return impl_->pre; }
int32_t Tokenizer::bos() const { return impl_->bos; }
int32_t Tokenizer::eos() const { return impl_->eos; }
int32_t Tokenizer::eot() const { return impl_->eot; }
int32_t Tokenizer::eom() const { return impl_->eom; }
int32_t Tokenizer::unk() const { return impl_->unk; }
int32_t Tokenizer::sep() const { return impl_->sep; }
int32_t Tokenizer::pad() const { return impl_->pad; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
bool Tokenizer::add_eos() const { return impl_->add_eos; }
bool Tokenizer::add_space_prefix() const { return impl_->add_space_prefix; }
bool Tokenizer::clean_spaces() const { return impl_->clean_spaces; }
bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && id < n_vocab() && impl_->eog_flag[id] != 0;
}
const std::vector<int32_t>& Tokenizer::eog_ids() const { return impl_->eog; }
std::string_view Tokenizer::token_text(int32_t id) const { return impl_->tokens.at(id).text; }
TokenType Tokenizer::token_type(int32_t id) const { return impl_->tokens.at(id).type; }
float Tokenizer::token_score(int32_t id) const { return impl_->tokens.at(id).score; }
std::optional<int32_t> Tokenizer::find_token(std::string_view text) const {
  const int32_t id = impl_->find(text);
  if (id < 0) return std::nullopt;
  return id;
}

std::string StreamDecoder::push(int32_t id) {
  pending_ += tok_.token_to_piece(id, render_special_);
  const size_t n = utf8::complete_prefix(pending_);
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace nurl
