// Per-model constraint compiler (see constraints.h).
#include "engine/runtime/constraints.h"

#include "core/json-text.h"
#include "engine/grammar/json-schema.h"

namespace nurl {

std::shared_ptr<const grammar::VocabTrie> ConstraintCompiler::vocab() {
  std::lock_guard lk(mu_);
  if (!vocab_) {
    std::vector<std::string> pieces(static_cast<size_t>(tok_.n_vocab()));
    for (int32_t id = 0; id < tok_.n_vocab(); ++id) {
      const TokenType t = tok_.token_type(id);
      if (tok_.is_eog(id) || t == TokenType::control || t == TokenType::unknown || t == TokenType::unused) continue;
      pieces[static_cast<size_t>(id)] = tok_.token_to_piece(id, false);
    }
    vocab_ = std::make_shared<const grammar::VocabTrie>(std::move(pieces));
  }
  return vocab_;
}

std::shared_ptr<grammar::TokenFilter> ConstraintCompiler::find(const std::string& key) {
  std::lock_guard lk(mu_);
  for (auto it = cache_.begin(); it != cache_.end(); ++it) {
    if (it->first != key) continue;
    cache_.splice(cache_.begin(), cache_, it);
    return cache_.front().second;
  }
  return nullptr;
}

void ConstraintCompiler::keep(const std::string& key, std::shared_ptr<grammar::TokenFilter> f) {
  std::lock_guard lk(mu_);
  cache_.emplace_front(key, std::move(f));
  if (cache_.size() > kCacheSize) cache_.pop_back();
}

Result<std::shared_ptr<grammar::TokenFilter>> ConstraintCompiler::format(const std::string& format) {
  const std::string key = "format\x1f" + format;
  if (auto f = find(key)) return f;
  NURL_ASSIGN(grammar::Grammar g, grammar::compile_format(format));
  auto f = std::make_shared<grammar::TokenFilter>(std::make_shared<const grammar::Grammar>(std::move(g)), vocab(),
                                                  tok_.eog_ids(), std::vector<grammar::SpecialToken>{});
  keep(key, f);
  return f;
}

Result<std::shared_ptr<grammar::TokenFilter>> ConstraintCompiler::tool_call(const chat::ToolFormat& fmt,
                                                                            const std::string& tools_json,
                                                                            const chat::ToolGrammarOptions& opts) {
  const char sep = '\x1f';
  const std::string key = "tools" + std::string(1, sep) + std::string(fmt.family) + sep + tools_json + sep +
                          std::string(opts.only) + sep + (opts.parallel ? "many" : "one");
  if (auto f = find(key)) return f;
  auto tools = parse_ordered_json(tools_json);
  if (tools.is_discarded() || !tools.is_array()) return Error(Code::invalid_argument, "tools must be a JSON array");
  NURL_ASSIGN(grammar::Grammar g, chat::tool_call_grammar(fmt, tools, opts));
  // Markers that are control tokens of this vocabulary are allowed as those tokens.
  std::vector<grammar::SpecialToken> specials;
  for (std::string_view m : {fmt.block_open, fmt.block_close, fmt.call_open, fmt.call_close, fmt.name_end, fmt.id_end,
                             fmt.key_open, fmt.key_close, fmt.value_open, fmt.value_close}) {
    if (m.empty()) continue;
    auto id = tok_.find_token(m);
    if (id && tok_.token_type(*id) == TokenType::control && !tok_.is_eog(*id))
      specials.push_back({*id, std::string(m)});
  }
  auto f = std::make_shared<grammar::TokenFilter>(std::make_shared<const grammar::Grammar>(std::move(g)), vocab(),
                                                  tok_.eog_ids(), std::move(specials));
  keep(key, f);
  return f;
}

}  // namespace nurl
