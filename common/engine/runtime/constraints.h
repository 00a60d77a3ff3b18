// Output constraints for one model: formats ("json" or a JSON schema) and forced tool calls
// compiled into token filters over this model's vocabulary. The vocabulary trie is built on first
// use (a model that never sees a constraint pays nothing); compiled filters are cached by their
// request (an LRU of kCacheSize), so a repeated schema reuses its grammar and its per-key masks.
// Thread-safe.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/error.h"
#include "engine/chat/reply-format.h"
#include "engine/chat/tool-grammar.h"
#include "engine/grammar/token-filter.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl {

class ConstraintCompiler {
 public:
  static constexpr size_t kCacheSize = 16;

  explicit ConstraintCompiler(Tokenizer tok) : tok_(std::move(tok)) {}

  Result<std::shared_ptr<grammar::TokenFilter>> format(const std::string& format);
  // `tools_json`: the request's tool list (OpenAI shape).
  Result<std::shared_ptr<grammar::TokenFilter>> tool_call(const chat::ToolFormat& f, const std::string& tools_json,
                                                          const chat::ToolGrammarOptions& opts);

  // The bytes each token prints, as the filters see them (control and end-of-generation tokens
  // print nothing here).
  std::shared_ptr<const grammar::VocabTrie> vocab();

 private:
  std::shared_ptr<grammar::TokenFilter> find(const std::string& key);
  void keep(const std::string& key, std::shared_ptr<grammar::TokenFilter> f);

  Tokenizer tok_;
  std::mutex mu_;
  std::shared_ptr<const grammar::VocabTrie> vocab_;
  std::list<std::pair<std::string, std::shared_ptr<grammar::TokenFilter>>> cache_;  // most recent first
};

}  // namespace nurl
