// read_tokenizer: the vocabulary (hf-vocab.cpp) completed with added tokens, padding, special ids,
// flags and the chat template, as GGUF keys (see hf-tokenizer.h).
#include "engine/convert/hf-tokenizer.h"

#include <unordered_map>

#include "engine/convert/hf-json.h"
#include "engine/convert/hf-vocab.h"
#include "engine/gguf/gguf-writer.h"

namespace nurl::convert {

namespace {

constexpr uint64_t kMaxTokenizerJson = uint64_t(512) << 20;
constexpr uint64_t kMaxTemplate = uint64_t(1) << 20;

gguf::Value str(std::string s) { return gguf::Value{gguf::Value::Storage(std::move(s))}; }
gguf::Value u32(uint32_t v) { return gguf::Value{gguf::Value::Storage(v)}; }
gguf::Value boolean(bool v) { return gguf::Value{gguf::Value::Storage(v)}; }

// A token text from tokenizer_config.json: "<s>" or {"content": "<s>", ...}; empty when absent.
std::string token_text(const JsonDoc* cfg, const std::string& key) {
  if (!cfg) return "";
  const Json* v = cfg->find(key);
  if (!v) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_object() && v->contains("content") && (*v)["content"].is_string()) return (*v)["content"];
  return "";
}

// tokenizer_config.json "added_tokens_decoder": {"<id>": {"content", "special"}} overrides the
// text and type of ids (llama.cpp gives them the score −1000).
Result<void> apply_added_tokens_decoder(const JsonDoc& cfg, Vocab& v) {
  const Json* d = cfg.find("added_tokens_decoder");
  if (!d) return {};
  if (!d->is_object()) return cfg.error("added_tokens_decoder", "is not an object");
  for (auto it = d->begin(); it != d->end(); ++it) {
    char* end = nullptr;
    const long long id = std::strtoll(it.key().c_str(), &end, 10);
    if (it.key().empty() || *end != 0 || id < 0 || id >= (1 << 24) || !it->is_object() || !it->contains("content") ||
        !(*it)["content"].is_string())
      return cfg.error("added_tokens_decoder", "entry \"" + it.key().substr(0, 20) + "\" is not {id: {\"content\": ...}}");
    const bool special = it->contains("special") && (*it)["special"] == true;
    v.set(id, (*it)["content"], special ? kTypeControl : kTypeUserDefined, -1000.0f);
  }
  return {};
}

// add_bos / add_eos from tokenizer.json's TemplateProcessing post-processor (a single sequence
// that starts / ends with a special token).
void flags_from_post_processor(const Json& pp, int64_t bos, int64_t eos, std::optional<bool>& add_bos,
                               std::optional<bool>& add_eos) {
  if (!pp.is_object() || !pp.contains("type")) return;
  if (pp["type"] == "Sequence" && pp.contains("processors") && pp["processors"].is_array()) {
    for (const auto& p : pp["processors"]) flags_from_post_processor(p, bos, eos, add_bos, add_eos);
    return;
  }
  if (pp["type"] != "TemplateProcessing" || !pp.contains("single") || !pp["single"].is_array()) return;
  const Json& single = pp["single"];
  auto special_id = [&](const Json& item) -> int64_t {
    if (!item.is_object() || !item.contains("SpecialToken") || !item["SpecialToken"].is_object()) return -1;
    const Json& st = item["SpecialToken"];
    if (!st.contains("id") || !st["id"].is_string() || !pp.contains("special_tokens") || !pp["special_tokens"].is_object())
      return -1;
    const Json& sts = pp["special_tokens"];
    const std::string name = st["id"];
    if (!sts.contains(name) || !sts[name].is_object() || !sts[name].contains("ids") || !sts[name]["ids"].is_array() ||
        sts[name]["ids"].empty() || !sts[name]["ids"][0].is_number_integer())
      return -1;
    return sts[name]["ids"][0].get<int64_t>();
  };
  if (!single.empty()) {
    add_bos = bos >= 0 && special_id(single.front()) == bos;
    add_eos = eos >= 0 && special_id(single.back()) == eos;
  }
}

Result<void> add_chat_templates(const std::filesystem::path& dir, const JsonDoc* cfg, std::vector<gguf::KeyValue>& kv) {
  const Json* t = cfg ? cfg->find("chat_template") : nullptr;
  if (t && t->is_string()) {
    kv.push_back({"tokenizer.chat_template", str(*t)});
    return {};
  }
  if (t && t->is_array()) {
    std::vector<std::string> names;
    for (const auto& e : *t) {
      if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("template") || !e["template"].is_string())
        return cfg->error("chat_template", "list entries must be {\"name\", \"template\"}");
      const std::string name = e["name"];
      if (name == "default") {
        kv.push_back({"tokenizer.chat_template", str(e["template"])});
      } else {
        kv.push_back({"tokenizer.chat_template." + name, str(e["template"])});
        names.push_back(name);
      }
    }
    if (!names.empty()) kv.push_back({"tokenizer.chat_templates", gguf::make_string_array(names)});
    return {};
  }
  if (t) return cfg->error("chat_template", "is neither a string nor a list of templates");
  if (std::filesystem::exists(dir / "chat_template.jinja")) {
    NURL_ASSIGN(std::string text, read_file_bounded(dir / "chat_template.jinja", kMaxTemplate));
    kv.push_back({"tokenizer.chat_template", str(std::move(text))});
  }
  return {};
}

}  // namespace

Result<std::string> identify_pre_tokenizer(const std::string& text) {
  NURL_ASSIGN(JsonDoc tj, JsonDoc::parse(text, "tokenizer.json"));
  NURL_ASSIGN(Vocab v, read_bpe_vocab(tj, true));
  return v.pre;
}

Result<std::vector<gguf::KeyValue>> read_tokenizer(const std::filesystem::path& dir, const VocabOptions& opts) {
  std::optional<JsonDoc> cfg;
  if (std::filesystem::exists(dir / "tokenizer_config.json")) {
    auto c = JsonDoc::load(dir / "tokenizer_config.json", uint64_t(64) << 20);
    if (!c.ok()) return c.error();
    cfg = std::move(c).value();
  }
  const JsonDoc* tc = cfg ? &*cfg : nullptr;

  Vocab v;
  if (std::filesystem::exists(dir / "tokenizer.model")) {
    NURL_ASSIGN(v, read_spm_vocab(dir / "tokenizer.model"));
  } else if (std::filesystem::exists(dir / "tokenizer.json")) {
    NURL_ASSIGN(JsonDoc tj, JsonDoc::load(dir / "tokenizer.json", kMaxTokenizerJson));
    bool clean = true;
    if (tc) {
      NURL_ASSIGN(clean, tc->get_bool_or("clean_up_tokenization_spaces", true));
    }
    NURL_ASSIGN(v, read_bpe_vocab(tj, clean));
  } else {
    return Error(Code::not_found, dir.string() + ": no tokenizer.model or tokenizer.json");
  }
  if (tc) NURL_TRY(apply_added_tokens_decoder(*tc, v));

  // Pad to the embedding's rows; a tokenizer with more ids than rows cannot be used.
  if (int64_t(v.tokens.size()) > opts.vocab_size)
    return Error(Code::corrupt, dir.string() + ": the tokenizer has " + std::to_string(v.tokens.size()) +
                                    " tokens, more than config.json's vocab_size " + std::to_string(opts.vocab_size));
  const size_t n = size_t(opts.vocab_size);
  v.tokens.resize(n);
  v.types.resize(n, kTypeUnused);
  v.present.resize(n, false);
  if (v.model == "llama") v.scores.resize(n, 0.0f);
  for (size_t i = 0; i < n; ++i) {
    if (v.present[i]) continue;
    v.tokens[i] = "[PAD" + std::to_string(i) + "]";
    v.types[i] = opts.pad_as_unknown ? kTypeUnknown : kTypeUnused;
    if (v.model == "llama") v.scores[i] = -10000.0f;
  }

  // Special ids: the token texts of tokenizer_config.json, else config.json's ids, else (for
  // SentencePiece) the trainer's.
  std::unordered_map<std::string, int64_t> by_text;
  for (size_t i = n; i-- > 0;) by_text[v.tokens[i]] = int64_t(i);  // lowest id wins
  std::optional<JsonDoc> model_cfg;
  if (auto c = JsonDoc::load(dir / "config.json", uint64_t(16) << 20); c.ok()) model_cfg = std::move(c).value();
  auto special = [&](const std::string& what, int32_t spm_id) -> Result<int64_t> {
    const std::string text = token_text(tc, what + "_token");
    if (!text.empty()) {
      auto it = by_text.find(text);
      if (it == by_text.end())
        return Error(Code::corrupt, "tokenizer_config.json: " + what + "_token \"" + text.substr(0, 40) + "\" is not a token");
      return it->second;
    }
    if (model_cfg) {  // an id that is no token (-1, or past the vocabulary) means none
      if (const Json* id = model_cfg->find(what + "_token_id"); id && id->is_number_integer()) {
        const int64_t x = id->get<int64_t>();
        if (x >= 0 && x < int64_t(n)) return x;
      }
    }
    return int64_t(spm_id);
  };
  NURL_ASSIGN(int64_t bos, special("bos", v.spm_bos));
  NURL_ASSIGN(int64_t eos, special("eos", v.spm_eos));
  NURL_ASSIGN(int64_t unk, special("unk", v.spm_unk));
  NURL_ASSIGN(int64_t pad, special("pad", v.spm_pad));
  NURL_ASSIGN(int64_t eot, special("eot", -1));

  std::optional<bool> add_bos, add_eos;
  if (tc && tc->has("add_bos_token")) {
    NURL_ASSIGN(add_bos, tc->get_bool_or("add_bos_token", true));
  }
  if (tc && tc->has("add_eos_token")) {
    NURL_ASSIGN(add_eos, tc->get_bool_or("add_eos_token", false));
  }
  if (!add_bos && !add_eos) flags_from_post_processor(v.post_processor, bos, eos, add_bos, add_eos);
  if (!add_bos && v.model == "gpt2") add_bos = false;

  std::vector<gguf::KeyValue> kv;
  kv.push_back({"tokenizer.ggml.model", str(v.model)});
  kv.push_back({"tokenizer.ggml.pre", str(v.pre)});
  kv.push_back({"tokenizer.ggml.tokens", gguf::make_string_array(v.tokens)});
  if (v.model == "llama") {
    std::vector<gguf::Value> scores;
    scores.reserve(n);
    for (float s : v.scores) scores.push_back(gguf::Value{gguf::Value::Storage(s)});
    kv.push_back({"tokenizer.ggml.scores", gguf::make_array(gguf::ValueType::f32, std::move(scores))});
  }
  std::vector<gguf::Value> types;
  types.reserve(n);
  for (int32_t t : v.types) types.push_back(gguf::Value{gguf::Value::Storage(t)});
  kv.push_back({"tokenizer.ggml.token_type", gguf::make_array(gguf::ValueType::i32, std::move(types))});
  if (v.model == "gpt2") kv.push_back({"tokenizer.ggml.merges", gguf::make_string_array(v.merges)});
  for (auto [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", bos}, std::pair{"tokenizer.ggml.eos_token_id", eos},
                         std::pair{"tokenizer.ggml.unknown_token_id", unk}, std::pair{"tokenizer.ggml.padding_token_id", pad},
                         std::pair{"tokenizer.ggml.eot_token_id", eot}})
    if (id >= 0 && id < int64_t(n)) kv.push_back({key, u32(uint32_t(id))});
  if (add_bos) kv.push_back({"tokenizer.ggml.add_bos_token", boolean(*add_bos)});
  if (add_eos) kv.push_back({"tokenizer.ggml.add_eos_token", boolean(*add_eos)});
  if (v.add_space_prefix) kv.push_back({"tokenizer.ggml.add_space_prefix", boolean(*v.add_space_prefix)});
  NURL_TRY(add_chat_templates(dir, tc, kv));
  return kv;
}

}  // namespace nurl::convert
