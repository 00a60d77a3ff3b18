// Streaming reply parser: splits a model's output into reasoning, text and tool calls as the
// template family writes them (a ReplyFormat row). Text arrives piece by piece (token pieces);
// anything that may still turn into a marker is held back, so a <think> or <tool_call> split
// across tokens never leaks into the text. A call is emitted as soon as it is complete; text
// before a call stays text. Output that does not parse as the format claims (a malformed call, a
// block cut off by the end of generation) comes out as text: nothing is ever lost.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/chat/reply-format.h"

namespace nurl::chat {

struct ParsedCall {
  std::string id;         // from the output when it carries one, else generated ("call_...")
  std::string name;
  std::string arguments;  // a JSON object, compact
};

struct ReplyPart {
  enum class Kind { text, thinking, tool_call };
  Kind kind = Kind::text;
  std::string text;
  ParsedCall call;
};

struct ParserOptions {
  const ToolFormat* tools = nullptr;  // null: calls are not parsed (no tools, or tool_choice none)
  const ThinkFormat* think = nullptr;
  bool starts_in_thinking = false;    // the prompt ends inside a reasoning block
  bool starts_in_call = false;        // the prompt ends with the call opener (functionary v3.2)
  nlohmann::ordered_json tool_defs;   // the request's tools (OpenAI shape): names and parameter types
};

// Where the rendered prompt leaves the model: inside a reasoning block (its last opener is not
// closed), or right after a call opener.
bool prompt_ends_in_thinking(std::string_view prompt, const ThinkFormat& f);
bool prompt_ends_in_call(std::string_view prompt, const ToolFormat& f);

class ReplyParser {
 public:
  explicit ReplyParser(ParserOptions o);

  void push(std::string_view text, std::vector<ReplyPart>& out);
  // End of the output: everything still held, as what it is (an unfinished call as text).
  void finish(std::vector<ReplyPart>& out);

  bool thinking() const { return mode_ == Mode::thinking; }
  // Enters a reasoning block now, before any output (the caller puts the returned opener at the
  // end of the prompt); "" when the format has none.
  std::string begin_thinking();
  // The marker that ends a reasoning block ("" when the format has none).
  std::string thinking_close() const { return o_.think ? std::string(o_.think->close) : std::string(); }
  // Reasoning was seen and is over (a constraint on the answer may start).
  bool thought() const { return thought_; }
  // Every marker the format reads (so control tokens with these texts are printed for it).
  std::vector<std::string> markers() const;

 private:
  enum class Mode { start, thinking, content, block, call, bare };
  void step(std::vector<ReplyPart>& out, bool eof);
  bool in_start(std::vector<ReplyPart>& out, bool eof);
  bool in_thinking(std::vector<ReplyPart>& out, bool eof);
  bool in_content(std::vector<ReplyPart>& out, bool eof);
  bool in_block(std::vector<ReplyPart>& out, bool eof);
  bool in_call(std::vector<ReplyPart>& out, bool eof);
  bool in_bare(std::vector<ReplyPart>& out, bool eof);
  void emit_text(std::string_view t, std::vector<ReplyPart>& out);
  void emit_call(ParsedCall c, std::vector<ReplyPart>& out);
  void fail_block(std::vector<ReplyPart>& out);  // the raw text of the current block as text
  bool parse_call_body(std::string_view body, ParsedCall& c);
  std::string new_id();

  ParserOptions o_;
  Mode mode_ = Mode::start;
  std::string buf_;       // text not yet consumed
  std::string raw_;       // the current block's consumed text, for fail_block
  bool thought_ = false;
  bool trim_next_ = false;  // drop whitespace at the start of the text after reasoning
  int n_calls_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace nurl::chat
