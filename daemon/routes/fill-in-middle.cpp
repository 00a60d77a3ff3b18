#include "routes/fill-in-middle.h"

#include <array>
#include <optional>

namespace nurl {

std::span<const FimSpelling> fim_spellings() {
  static constexpr std::array<FimSpelling, 4> kSpellings{{
      {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},                          // Qwen, CodeGemma
      {"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},                                // StarCoder, Granite
      {"<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "hole\xEF\xBD\x9C>",
       "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>"},                          // DeepSeek Coder
      {"\xE2\x96\x81<PRE>", "\xE2\x96\x81<SUF>", "\xE2\x96\x81<MID>"},                 // Code Llama
  }};
  return kSpellings;
}

const FimSpelling* find_fim(const std::function<bool(std::string_view)>& is_token) {
  for (const auto& s : fim_spellings())
    if (is_token(s.prefix) && is_token(s.suffix) && is_token(s.middle)) return &s;
  return nullptr;
}

namespace {

// The id of `text` when the vocabulary holds it as one token (matched as a special token).
std::optional<int32_t> single_token(const sched::LoadedModel& m, std::string_view text) {
  auto ids = m.tokenize(text, false);
  if (!ids.ok() || ids->size() != 1) return std::nullopt;
  const int32_t id = ids->front();
  if (m.control_text(id) == text || m.token_text(id) == text) return id;
  return std::nullopt;
}

}  // namespace

Result<std::vector<int32_t>> fim_prompt(const sched::LoadedModel& m, const std::string& prompt, const std::string& suffix) {
  const FimSpelling* fim = find_fim([&](std::string_view t) { return single_token(m, t).has_value(); });
  if (!fim)
    return Error(Code::invalid_argument,
                 "\"suffix\": this model does not support fill-in-the-middle (its vocabulary has no FIM tokens)");
  NURL_ASSIGN(std::vector<int32_t> out, m.tokenize("", true));  // BOS, when the model adds one
  auto append = [&](std::string_view text, bool special) -> Result<void> {
    if (special) {
      out.push_back(*single_token(m, text));
      return ok();
    }
    NURL_ASSIGN(auto ids, m.tokenize(text, false));
    out.insert(out.end(), ids.begin(), ids.end());
    return ok();
  };
  NURL_TRY(append(fim->prefix, true));
  NURL_TRY(append(prompt, false));
  NURL_TRY(append(fim->suffix, true));
  NURL_TRY(append(suffix, false));
  NURL_TRY(append(fim->middle, true));
  return out;
}

std::function<Result<sched::PreparedPrompt>(const sched::LoadedModel&)> fim_prepare(std::string prompt,
                                                                                      std::string suffix) {
  return [prompt = std::move(prompt), suffix = std::move(suffix)](const sched::LoadedModel& m)
             -> Result<sched::PreparedPrompt> {
    sched::PreparedPrompt p;
    p.rendered = prompt + suffix;
    NURL_ASSIGN(p.tokens, fim_prompt(m, prompt, suffix));
    return p;
  };
}

}  // namespace nurl
