// Pre-tokenizer pattern table and the PCRE2 splitting loop.
//
// The patterns are the ones the models' own tokenizer.json files declare (GPT-2's encoder,
// tiktoken's cl100k for Llama 3, Qwen2's variant with single digits, the DeepSeek and Falcon
// "Sequence of Split" pre-tokenizers, StarCoder's digit split before the GPT-2 pattern), written in
// PCRE2 syntax. Where llama.cpp (our oracle) deviates from them we follow llama.cpp and say so.
#include "engine/tokenizer/pre-tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

namespace nurl::tokenizer_detail {

namespace {

// `\s` / `\S` in the table mean Unicode White_Space (PCRE2's UCP `\s` also takes U+180E, which
// is no longer whitespace); they are rewritten before compiling.
constexpr const char* kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// Llama 3 (tiktoken cl100k). Contractions are matched case-insensitively for ASCII letters only.
constexpr const char* kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2: as Llama 3 but every digit is its own piece.
constexpr const char* kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char* kCjk = R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
// DeepSeek LLM's letter class: the cased-letter blocks (Latin, Greek, Cyrillic, Armenian,
// Georgian, Cherokee, Glagolitic, Coptic, Deseret, Osage, ...), written with escapes because some of
// its code points (U+1F7D, U+2126, U+212A, ...) are not stable under Unicode normalisation.
constexpr const char* kDeepseekLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}-\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}-\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}-\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)";
// DeepSeek LLM's punctuation class is [!-/:-~！-／：-～‘-‟　-。]. llama.cpp turns every non-ASCII
// whitespace into a vertical tab before matching, so U+3000 never matches the class there; we
// start the last range at U+3001 to give the same pieces.
constexpr const char* kDeepseekPunct = R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3001}-\x{3002}]+)";

struct PreSpec {
  std::array<const char*, 12> names;  // null-terminated list of tokenizer.ggml.pre values
  std::array<const char*, 6> patterns;
  PreTokenizerTraits traits;
};

// One row per pre-tokenizer family. Flags: clean_spaces, ignore_merges, add_bos.
const PreSpec kSpecs[] = {
    // No or unknown-to-the-converter pre-tokenizer: llama.cpp's default split (punctuation runs,
    // the GPT-2 pattern, digit runs, then groups of three ASCII digits).
    {{"default", ""},
     {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"},
     {true, false, false}},
    {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"},
     {kLlama3},
     {true, true, true}},
    {{"dbrx", "smaug-bpe"}, {kLlama3}, {true, false, false}},
    {{"qwen2", "deepseek-r1-qwen", "megrez"}, {kQwen2}, {false, false, false}},
    {{"stablelm2", "hunyuan"}, {kQwen2}, {true, false, false}},
    {{"deepseek-llm"},
     {R"([\r\n])", kDeepseekLetters, kDeepseekPunct, R"(\s+\z)", kCjk, R"(\p{N}+)"},
     {false, false, false}},
    {{"deepseek-coder"},
     {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"},
     {false, false, false}},
    {{"deepseek-v3"},
     {R"(\p{N}{1,3})", R"([一-龥぀-ゟ゠-ヿ]+)",
      R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
     {false, false, false}},
    {{"falcon"},
     {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"},
     {true, false, false}},
    {{"starcoder", "refact", "codeshell", "exaone", "minerva-7b"},
     {R"(\p{N})", kGpt2},
     {true, false, false}},
    {{"command-r", "smollm"}, {R"(\p{N})", kGpt2}, {false, false, false}},
    {{"gpt-2", "gpt2", "gpt-neox", "mpt", "olmo", "jais", "phi-2", "roberta-bpe", "jina-v1-en",
      "jina-v2-es", "jina-v2-de", "jina-v2-code"},
     {kGpt2},
     {true, false, false}},
    {{"bloom", "gpt3-finnish"}, {R"( ?[^(\s|.,!?…。，、।۔،)]+)"}, {true, false, false}},
    {{"poro-chat"}, {R"( ?[^(\s|.,!?…。，、।۔،)]+)"}, {false, false, false}},
    {{"viking"}, {R"( ?[^(\s|.,!?…。，、।۔،)]+)", R"(\p{N})"}, {false, false, false}},
    {{"gpt-4o", "llama4"},
     {R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)"},
     {false, false, false}},
};

const PreSpec* find_spec(std::string_view pre) {
  for (const auto& s : kSpecs)
    for (const char* n : s.names) {
      if (n == nullptr) break;
      if (pre == n) return &s;
    }
  return nullptr;
}

std::string rewrite_whitespace(std::string_view p) {
  std::string out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\' && i + 1 < p.size()) {
      if (p[i + 1] == 's') {
        out += R"(\p{White_Space})";
      } else if (p[i + 1] == 'S') {
        out += R"(\P{White_Space})";
      } else {
        out += p.substr(i, 2);
      }
      ++i;
    } else {
      out += p[i];
    }
  }
  return out;
}

}  // namespace

struct PreTokenizer::Pattern {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Pattern() { pcre2_code_free(code); }
};

PreTokenizer::~PreTokenizer() = default;

std::string PreTokenizer::known_names() {
  std::string s;
  for (const auto& spec : kSpecs)
    for (const char* n : spec.names) {
      if (n == nullptr) break;
      if (*n == 0) continue;
      if (!s.empty()) s += ", ";
      s += n;
    }
  return s;
}

Result<std::shared_ptr<const PreTokenizer>> PreTokenizer::create(std::string_view pre) {
  const PreSpec* spec = find_spec(pre);
  if (spec == nullptr)
    return Error(Code::unsupported, "tokenizer.ggml.pre '" + std::string(pre) +
                                        "' is not a known pre-tokenizer (known: " + known_names() +
                                        ")");
  std::vector<std::string> patterns;
  for (const char* pat : spec->patterns) {
    if (pat == nullptr) break;
    patterns.emplace_back(pat);
  }
  return compile(patterns, spec->traits, "pre-tokenizer '" + std::string(pre) + "'");
}

std::vector<std::string> PreTokenizer::family_names() {
  std::vector<std::string> v;
  for (const auto& spec : kSpecs) v.emplace_back(spec.names[0]);
  return v;
}

Result<std::shared_ptr<const PreTokenizer>> PreTokenizer::from_patterns(const std::vector<std::string>& patterns) {
  return compile(patterns, PreTokenizerTraits{}, "pre-tokenizer pattern");
}

Result<std::shared_ptr<const PreTokenizer>> PreTokenizer::compile(const std::vector<std::string>& patterns,
                                                                  const PreTokenizerTraits& traits,
                                                                  std::string_view what) {
  std::shared_ptr<PreTokenizer> p(new PreTokenizer());
  p->traits_ = traits;
  for (const std::string& pat : patterns) {
    const std::string src = rewrite_whitespace(pat);
    int err = 0;
    PCRE2_SIZE err_off = 0;
    auto pattern = std::make_unique<Pattern>();
    pattern->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(src.data()), src.size(),
                                  PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
    if (pattern->code == nullptr) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(err, msg, sizeof msg);
      return Error(Code::invalid_argument, std::string(what) + ": pattern " + src.substr(0, 200) +
                                               " at offset " + std::to_string(err_off) + ": " +
                                               reinterpret_cast<const char*>(msg));
    }
    pattern->jit = pcre2_jit_compile(pattern->code, PCRE2_JIT_COMPLETE) == 0;
    p->patterns_.push_back(std::move(pattern));
  }
  return std::shared_ptr<const PreTokenizer>(std::move(p));
}

namespace {

// Length of the UTF-8 sequence starting at a lead byte of valid text.
size_t char_len(unsigned char b) { return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

}  // namespace

void PreTokenizer::split(std::string_view text, std::vector<Span>& out) const {
  out.clear();
  if (text.empty()) return;
  out.push_back({0, text.size()});
  std::vector<Span> next;
  pcre2_match_data* md = pcre2_match_data_create(1, nullptr);
  const auto* subject_all = reinterpret_cast<PCRE2_SPTR>(text.data());
  for (const auto& pat : patterns_) {
    next.clear();
    for (const Span piece : out) {
      const PCRE2_SPTR subject = subject_all + piece.begin;
      const size_t len = piece.end - piece.begin;
      size_t pos = 0;
      size_t last = 0;  // end of the previous match (pieces are relative to `subject`)
      while (pos < len) {
        int rc = pat->jit ? pcre2_jit_match(pat->code, subject, len, pos, 0, md, nullptr)
                          : pcre2_match(pat->code, subject, len, pos, PCRE2_NO_UTF_CHECK, md,
                                        nullptr);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // very long pathological input: interpreter
          rc = pcre2_match(pat->code, subject, len, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md,
                           nullptr);
        if (rc < 0) break;  // no more matches (or a match-limit error: the rest stays one gap)
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t ms = ov[0], me = ov[1];
        if (me == ms) {  // empty match: never emitted; step over one character
          pos = ms + char_len(static_cast<unsigned char>(subject[ms]));
          continue;
        }
        if (ms > last) next.push_back({piece.begin + last, piece.begin + ms});
        next.push_back({piece.begin + ms, piece.begin + me});
        last = pos = me;
      }
      if (last < len) next.push_back({piece.begin + last, piece.end});
    }
    out.swap(next);
  }
  pcre2_match_data_free(md);
}

}  // namespace nurl::tokenizer_detail
