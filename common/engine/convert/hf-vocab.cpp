// Vocabulary readers: SentencePiece's tokenizer.model and the BPE model of tokenizer.json, with
// the BPE pre-tokenizer identified by comparing splits (see hf-tokenizer.h).
#include "engine/convert/hf-vocab.h"

#include "engine/convert/spm-model.h"
#include "engine/tokenizer/pre-tokenizer.h"

namespace nurl::convert {

namespace {

using tokenizer_detail::PreTokenizer;
using tokenizer_detail::Span;

constexpr int64_t kMaxVocab = int64_t(1) << 24;

// GPT-2's split, which tokenizers' ByteLevel pre-tokenizer applies when use_regex is on.
constexpr const char* kByteLevelRegex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Texts whose splits tell the families apart: contractions in both cases, digit runs, newlines
// and spaces in every arrangement, scripts without spaces, punctuation runs, symbols.
constexpr const char* kProbes[] = {
    "Hello world, this is a test.",
    "I'm sure they'll say we've DONE it; you're 'right' & he'd agree. DON'T CAN'T",
    "1 12 123 1234 12345 1234567890 3.14159 1,000,000 -42 x2 2x",
    "  leading spaces\n\nnew lines\r\n\ttabs   and   runs \n \n  trailing   ",
    "中文字符测试，标点。日本語のテキスト、カタカナ。한국어 문장입니다.",
    "émigré Ünïcödé ÀÉÎÕÜ naïve café ß ﬁ",
    "emoji 🦙🔥👍🏽 and symbols ©®™ ±×÷ ∑∫√ €£¥ → ← ↑",
    "code: for (int i = 0; i < n; ++i) { x[i] += y[i] * 2; } // done\n\treturn a->b;",
    "!!! ??? ... --- *** ((()))[[]]{{}} <<>> ''\"\" ``",
    "mixedCASE camelCase snake_case kebab-case SCREAMING_CASE",
    "\u00a0non-breaking\u2009thin\u3000ideographic space",
    "Ａｂｃ１２３ full-width ＡＢＣ",
    "abc\n\n\n\ndef\n \nghi",
    "'s 's 'S 'll 'LL 've 'Ve",
};

bool same_splits(const PreTokenizer& a, const PreTokenizer& b) {
  std::vector<Span> sa, sb;
  for (const char* p : kProbes) {
    a.split(p, sa);
    b.split(p, sb);
    if (sa.size() != sb.size()) return false;
    for (size_t i = 0; i < sa.size(); ++i)
      if (sa[i].begin != sb[i].begin || sa[i].end != sb[i].end) return false;
  }
  return true;
}

std::string escape_regex(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// The regexes a tokenizers pre_tokenizer applies, in order (only splitting kinds are accepted).
Result<void> collect_patterns(const Json& pt, std::vector<std::string>& out, int depth = 0) {
  if (pt.is_null()) return {};
  if (!pt.is_object() || !pt.contains("type") || !pt["type"].is_string() || depth > 8)
    return Error(Code::corrupt, "tokenizer.json: pre_tokenizer is not a pre-tokenizer object");
  const std::string type = pt["type"];
  if (type == "Sequence") {
    if (!pt.contains("pretokenizers") || !pt["pretokenizers"].is_array())
      return Error(Code::corrupt, "tokenizer.json: a Sequence pre_tokenizer without \"pretokenizers\"");
    for (const auto& p : pt["pretokenizers"]) NURL_TRY(collect_patterns(p, out, depth + 1));
    return {};
  }
  if (type == "Split") {
    const Json* pat = pt.contains("pattern") ? &pt["pattern"] : nullptr;
    if (pat && pat->is_object() && pat->contains("Regex") && (*pat)["Regex"].is_string()) {
      out.push_back((*pat)["Regex"]);
    } else if (pat && pat->is_object() && pat->contains("String") && (*pat)["String"].is_string()) {
      out.push_back(escape_regex((*pat)["String"]));
    } else {
      return Error(Code::corrupt, "tokenizer.json: a Split pre_tokenizer without a Regex or String pattern");
    }
    return {};
  }
  if (type == "ByteLevel") {
    if (!pt.contains("use_regex") || !pt["use_regex"].is_boolean() || pt["use_regex"].get<bool>())
      out.emplace_back(kByteLevelRegex);
    return {};
  }
  if (type == "Digits") {
    const bool each = pt.contains("individual_digits") && pt["individual_digits"].is_boolean() &&
                      pt["individual_digits"].get<bool>();
    out.emplace_back(each ? R"(\p{N})" : R"(\p{N}+)");
    return {};
  }
  return Error(Code::unsupported, "tokenizer.json: pre_tokenizer " + type.substr(0, 40) +
                                      " is not supported for byte-level BPE (Split, ByteLevel, Digits, Sequence are)");
}

Result<std::string> identify_pre(const Json& root, bool ignore_merges, bool clean_spaces) {
  std::vector<std::string> patterns;
  NURL_TRY(collect_patterns(root.contains("pre_tokenizer") ? root["pre_tokenizer"] : Json(), patterns));
  auto theirs = PreTokenizer::from_patterns(patterns);
  if (!theirs.ok()) return theirs.error().context("tokenizer.json");
  std::string first_match;
  for (const std::string& name : PreTokenizer::family_names()) {
    auto ours = PreTokenizer::create(name);
    if (!ours.ok() || !same_splits(**theirs, **ours)) continue;
    const auto& t = (*ours)->traits();
    if (t.ignore_merges == ignore_merges && t.clean_spaces == clean_spaces) return name;
    if (first_match.empty()) first_match = name;
  }
  if (!first_match.empty()) return first_match;
  std::string shown = patterns.empty() ? "(none)" : patterns[0].substr(0, 120);
  return Error(Code::unsupported, "tokenizer.json: the pre-tokenizer (" + shown +
                                      (patterns.size() > 1 ? " and " + std::to_string(patterns.size() - 1) + " more" : "") +
                                      ") splits text like none of the known families (" + PreTokenizer::known_names() + ")");
}

}  // namespace

void Vocab::set(int64_t id, std::string text, int32_t type, float score) {
  const size_t i = size_t(id);
  if (i >= tokens.size()) {
    tokens.resize(i + 1);
    types.resize(i + 1, kTypeUnused);
    present.resize(i + 1, false);
    if (model == "llama") scores.resize(i + 1, 0.0f);
  }
  tokens[i] = std::move(text);
  types[i] = type;
  present[i] = true;
  if (model == "llama") scores[i] = score;
}

Result<Vocab> read_spm_vocab(const std::filesystem::path& file) {
  NURL_ASSIGN(std::string bytes, read_file_bounded(file, uint64_t(256) << 20));
  NURL_ASSIGN(SpmModel m, parse_spm_model({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
                                          file.filename().string()));
  if (m.model_type != 1 && m.model_type != 2)
    return Error(Code::unsupported, file.filename().string() + ": SentencePiece model type " + std::to_string(m.model_type) +
                                        " (only unigram and BPE models are supported)");
  Vocab v;
  v.model = "llama";
  for (size_t i = 0; i < m.pieces.size(); ++i) v.set(int64_t(i), m.pieces[i].piece, int32_t(m.pieces[i].type), m.pieces[i].score);
  if (!m.add_dummy_prefix) v.add_space_prefix = false;
  const auto n = int32_t(m.pieces.size());
  auto id = [n](int32_t x) { return x >= 0 && x < n ? x : -1; };
  v.spm_unk = id(m.unk_id);
  v.spm_bos = id(m.bos_id);
  v.spm_eos = id(m.eos_id);
  v.spm_pad = id(m.pad_id);
  return v;
}

Result<Vocab> read_bpe_vocab(const JsonDoc& tj, bool clean_spaces) {
  const Json* model = tj.find("model");
  if (!model || !model->is_object()) return tj.error("model", "is missing or not an object");
  if (!model->contains("type") || (*model)["type"] != "BPE")
    return Error(Code::unsupported, tj.name + ": the tokenizer model is not BPE (a tokenizer.model file is needed for SentencePiece)");
  if (model->contains("byte_fallback") && (*model)["byte_fallback"] == true)
    return Error(Code::unsupported, tj.name + ": a SentencePiece-style BPE (byte_fallback); the checkpoint's tokenizer.model is needed");
  Vocab v;
  v.model = "gpt2";
  const Json* vocab = model->contains("vocab") ? &(*model)["vocab"] : nullptr;
  if (!vocab || !vocab->is_object()) return tj.error("model.vocab", "is missing or not an object");
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it->is_number_unsigned() || it->get<uint64_t>() >= uint64_t(kMaxVocab))
      return tj.error("model.vocab", "maps \"" + it.key().substr(0, 40) + "\" to an id that is not in [0, 2^24)");
    const int64_t id = int64_t(it->get<uint64_t>());
    if (size_t(id) < v.present.size() && v.present[size_t(id)])
      return tj.error("model.vocab", "gives id " + std::to_string(id) + " to two tokens");
    v.set(id, it.key(), kTypeNormal, 0);
  }
  if (const Json* added = tj.find("added_tokens")) {
    if (!added->is_array()) return tj.error("added_tokens", "is not an array");
    for (const auto& a : *added) {
      if (!a.is_object() || !a.contains("id") || !a["id"].is_number_unsigned() || a["id"].get<uint64_t>() >= uint64_t(kMaxVocab) ||
          !a.contains("content") || !a["content"].is_string())
        return tj.error("added_tokens", "holds an entry without an id in [0, 2^24) and a content string");
      const bool special = a.contains("special") && a["special"] == true;
      v.set(int64_t(a["id"].get<uint64_t>()), a["content"], special ? kTypeControl : kTypeUserDefined, 0);
    }
  }
  const Json* merges = model->contains("merges") ? &(*model)["merges"] : nullptr;
  if (!merges || !merges->is_array()) return tj.error("model.merges", "is missing or not an array");
  v.merges.reserve(merges->size());
  for (const auto& m : *merges) {
    if (m.is_string()) {
      v.merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      v.merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      return tj.error("model.merges", "holds an entry that is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  const bool ignore_merges = model->contains("ignore_merges") && (*model)["ignore_merges"] == true;
  NURL_ASSIGN(v.pre, identify_pre(tj.root, ignore_merges, clean_spaces));
  if (const Json* pp = tj.find("post_processor")) v.post_processor = *pp;
  return v;
}

}  // namespace nurl::convert
