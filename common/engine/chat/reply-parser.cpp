// Streaming reply parser (see reply-parser.h). One state per place in the reply; each handler
// consumes what it can from buf_ and says whether to run again (it changed state) or to wait
// for more text.
#include "engine/chat/reply-parser.h"

#include <algorithm>

#include "core/json-text.h"
#include "engine/chat/call-syntax.h"

namespace nurl::chat {

namespace {

using Json = nlohmann::ordered_json;

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && space(s[i])) ++i;
  return i;
}

bool starts_at(std::string_view s, size_t i, std::string_view m) { return !m.empty() && s.substr(i, m.size()) == m; }

// s[i..] is a proper prefix of m (more text may complete it).
bool prefix_of(std::string_view s, size_t i, std::string_view m) {
  const std::string_view rest = s.substr(std::min(i, s.size()));
  return !m.empty() && rest.size() < m.size() && m.substr(0, rest.size()) == rest;
}

// Length of the longest tail of s that is a proper prefix of one of the markers.
size_t held_tail(std::string_view s, std::initializer_list<std::string_view> markers) {
  size_t hold = 0;
  for (std::string_view m : markers) {
    if (m.empty()) continue;
    for (size_t n = std::min(m.size() - 1, s.size()); n > hold; --n)
      if (s.substr(s.size() - n) == m.substr(0, n)) {
        hold = n;
        break;
      }
  }
  return hold;
}

std::string trim(std::string_view s) {
  size_t b = skip_space(s, 0), e = s.size();
  while (e > b && space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// Parameter values written on their own lines (Qwen3-Coder) lose that one newline each side.
std::string_view strip_newlines(std::string_view v) {
  if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
  if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  return v;
}

std::string strip_kimi(std::string name) {
  if (name.rfind("functions.", 0) == 0) name.erase(0, 10);
  const size_t colon = name.rfind(':');
  if (colon != std::string::npos && colon + 1 < name.size() &&
      std::all_of(name.begin() + static_cast<ptrdiff_t>(colon) + 1, name.end(), ::isdigit))
    name.erase(colon);
  return name;
}

bool known_tool(const Json& tools, const std::string& name) {
  if (!tools.is_array()) return false;
  for (const auto& t : tools) {
    const Json& f = t.contains("function") ? t["function"] : t;
    if (f.is_object() && f.value("name", "") == name) return true;
  }
  return false;
}

}  // namespace

bool prompt_ends_in_thinking(std::string_view prompt, const ThinkFormat& f) {
  const size_t open = prompt.rfind(f.open);
  if (open == std::string_view::npos) return false;
  const size_t close = prompt.rfind(f.close);
  if (close != std::string_view::npos && close > open) return false;
  // Only when the opener ends the prompt (the generation prompt), give or take whitespace.
  return skip_space(prompt, open + f.open.size()) == prompt.size();
}

bool prompt_ends_in_call(std::string_view prompt, const ToolFormat& f) {
  if (f.call_open.empty() || !f.block_open.empty()) return false;
  std::string_view p = prompt;
  while (!p.empty() && space(p.back())) p.remove_suffix(1);
  return p.size() >= f.call_open.size() && p.substr(p.size() - f.call_open.size()) == f.call_open;
}

ReplyParser::ReplyParser(ParserOptions o) : o_(std::move(o)), rng_(std::random_device{}()) {
  if (o_.starts_in_thinking && o_.think) mode_ = Mode::thinking;
  else if (o_.starts_in_call && o_.tools) mode_ = Mode::call;
}

std::string ReplyParser::begin_thinking() {
  if (!o_.think) return {};
  mode_ = Mode::thinking;
  return std::string(o_.think->open);
}

std::vector<std::string> ReplyParser::markers() const {
  std::vector<std::string> out;
  auto add = [&](std::string_view m) {
    if (!m.empty() && std::find(out.begin(), out.end(), m) == out.end()) out.emplace_back(m);
  };
  if (o_.think) {
    add(o_.think->open);
    add(o_.think->close);
  }
  if (const ToolFormat* f = o_.tools) {
    for (std::string_view m : {f->block_open, f->block_close, f->call_open, f->call_close, f->alt_open, f->id_end,
                               f->name_end, f->key_open, f->key_close, f->value_open, f->value_close})
      add(m);
  }
  return out;
}

std::string ReplyParser::new_id() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "call_";
  uint64_t a = rng_(), b = rng_();
  for (int i = 0; i < 12; ++i) id += kHex[(a >> (4 * i)) & 15];
  for (int i = 0; i < 12; ++i) id += kHex[(b >> (4 * i)) & 15];
  return id;
}

void ReplyParser::emit_text(std::string_view t, std::vector<ReplyPart>& out) {
  if (t.empty()) return;
  const auto kind = mode_ == Mode::thinking ? ReplyPart::Kind::thinking : ReplyPart::Kind::text;
  if (!out.empty() && out.back().kind == kind) {
    out.back().text += t;
    return;
  }
  ReplyPart p;
  p.kind = kind;
  p.text = std::string(t);
  out.push_back(std::move(p));
}

void ReplyParser::emit_call(ParsedCall c, std::vector<ReplyPart>& out) {
  if (c.id.empty()) c.id = new_id();
  ReplyPart p;
  p.kind = ReplyPart::Kind::tool_call;
  p.call = std::move(c);
  out.push_back(std::move(p));
  ++n_calls_;
  raw_.clear();
}

void ReplyParser::fail_block(std::vector<ReplyPart>& out) {
  mode_ = Mode::content;
  const std::string text = raw_ + buf_;
  raw_.clear();
  buf_.clear();
  emit_text(text, out);
}

void ReplyParser::push(std::string_view text, std::vector<ReplyPart>& out) {
  buf_ += text;
  step(out, false);
}

void ReplyParser::finish(std::vector<ReplyPart>& out) {
  step(out, true);
  if (mode_ == Mode::thinking || mode_ == Mode::content || mode_ == Mode::start) {
    if (mode_ == Mode::start) mode_ = Mode::content;
    emit_text(buf_, out);
    buf_.clear();
  } else if (!buf_.empty() || !raw_.empty()) {
    fail_block(out);
  }
  mode_ = Mode::content;
}

void ReplyParser::step(std::vector<ReplyPart>& out, bool eof) {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    bool again = false;
    switch (mode_) {
      case Mode::start: again = in_start(out, eof); break;
      case Mode::thinking: again = in_thinking(out, eof); break;
      case Mode::content: again = in_content(out, eof); break;
      case Mode::block: again = in_block(out, eof); break;
      case Mode::call: again = in_call(out, eof); break;
      case Mode::bare: again = in_bare(out, eof); break;
    }
    if (!again) return;
  }
}

bool ReplyParser::in_start(std::vector<ReplyPart>& out, bool eof) {
  const size_t i = skip_space(buf_, 0);
  const bool bare = o_.tools && o_.tools->bare;
  if (o_.think) {
    if (starts_at(buf_, i, o_.think->open)) {
      buf_.erase(0, i + o_.think->open.size());
      mode_ = Mode::thinking;
      return true;
    }
    if (!eof && (i == buf_.size() || prefix_of(buf_, i, o_.think->open))) return false;
  }
  if (bare) {
    if (i < buf_.size() && buf_[i] == '{') {
      buf_.erase(0, i);
      mode_ = Mode::bare;
      return true;
    }
    if (!eof && i == buf_.size()) return false;
  }
  mode_ = Mode::content;
  (void)out;
  return true;
}

bool ReplyParser::in_thinking(std::vector<ReplyPart>& out, bool eof) {
  const std::string_view close = o_.think->close;
  const size_t pos = buf_.find(close);
  if (pos != std::string::npos) {
    emit_text(std::string_view(buf_).substr(0, pos), out);
    buf_.erase(0, pos + close.size());
    mode_ = Mode::content;
    thought_ = true;
    trim_next_ = true;
    return true;
  }
  if (eof) return false;
  const size_t hold = held_tail(buf_, {close});
  emit_text(std::string_view(buf_).substr(0, buf_.size() - hold), out);
  buf_.erase(0, buf_.size() - hold);
  return false;
}

bool ReplyParser::in_content(std::vector<ReplyPart>& out, bool eof) {
  if (trim_next_) {
    buf_.erase(0, skip_space(buf_, 0));
    if (buf_.empty()) return false;
    trim_next_ = false;
  }
  const ToolFormat* f = o_.tools;
  if (!f) {
    emit_text(buf_, out);
    buf_.clear();
    return false;
  }
  const std::string_view opener = !f->block_open.empty() ? f->block_open : f->call_open;
  size_t best = std::string::npos;
  std::string_view found;
  for (std::string_view m : {opener, f->alt_open}) {
    if (m.empty()) continue;
    const size_t p = buf_.find(m);
    if (p < best) best = p, found = m;
  }
  if (best != std::string::npos) {
    emit_text(std::string_view(buf_).substr(0, best), out);
    raw_ = std::string(found);
    buf_.erase(0, best + found.size());
    if (found == f->alt_open || (f->block_open.empty() && f->call_open.empty())) mode_ = Mode::bare;
    else mode_ = found == f->block_open ? Mode::block : Mode::call;
    return true;
  }
  const size_t hold = eof ? 0 : held_tail(buf_, {opener, f->alt_open});
  emit_text(std::string_view(buf_).substr(0, buf_.size() - hold), out);
  buf_.erase(0, buf_.size() - hold);
  return false;
}

// JSON call objects written directly (Llama 3), possibly several separated by ';'. Without a
// marker before them, they count as calls only when they name a tool of the request.
bool ReplyParser::in_bare(std::vector<ReplyPart>& out, bool eof) {
  const ToolFormat& f = *o_.tools;
  const size_t i = skip_space(buf_, 0);
  if (i == buf_.size()) {
    if (eof && n_calls_ > 0) {
      buf_.clear();
      raw_.clear();
      mode_ = Mode::content;
    }
    return false;
  }
  const size_t end = buf_[i] == '{' ? json_value_end(buf_, i) : kNotJson;
  if (end == kIncomplete) return false;
  std::optional<std::vector<CallJson>> calls;
  if (end != kNotJson) calls = calls_from_json_text(std::string_view(buf_).substr(i, end - i), f.name_key, f.args_key);
  bool ok = calls.has_value();
  if (ok && raw_.empty())
    for (const auto& c : *calls) ok = ok && known_tool(o_.tool_defs, c.name);
  if (!ok) {
    if (n_calls_ > 0 || !raw_.empty() || end == kNotJson) {
      raw_ += buf_.substr(0, end == kNotJson ? 0 : end);
      buf_.erase(0, end == kNotJson ? 0 : end);
      const std::string text = raw_;
      raw_.clear();
      mode_ = Mode::content;
      emit_text(text, out);
    } else {
      mode_ = Mode::content;
    }
    return true;
  }
  for (auto& c : *calls) emit_call(ParsedCall{c.id, c.name, dump_json(c.arguments, -1, InvalidUtf8::replace)}, out);
  size_t k = skip_space(buf_, end);
  while (k < buf_.size() && buf_[k] == ';') k = skip_space(buf_, k + 1);
  buf_.erase(0, k);
  if (!buf_.empty() && buf_[0] != '{') mode_ = Mode::content;
  return !buf_.empty();
}

bool ReplyParser::in_block(std::vector<ReplyPart>& out, bool eof) {
  const ToolFormat& f = *o_.tools;
  size_t i = skip_space(buf_, 0);
  if (!f.block_close.empty() && starts_at(buf_, i, f.block_close)) {  // end of the block
    buf_.erase(0, i + f.block_close.size());
    raw_.clear();
    mode_ = Mode::content;
    trim_next_ = true;  // whitespace between and after calls is not text
    return true;
  }
  if (!eof && i < buf_.size() && prefix_of(buf_, i, f.block_close)) return false;
  if (!f.call_open.empty()) {
    if (starts_at(buf_, i, f.call_open)) {
      raw_ += buf_.substr(0, i + f.call_open.size());
      buf_.erase(0, i + f.call_open.size());
      mode_ = Mode::call;
      return true;
    }
    if (!eof && (i == buf_.size() || prefix_of(buf_, i, f.call_open) || prefix_of(buf_, i, f.block_close))) return false;
    if (n_calls_ > 0 && raw_.empty()) {  // text after the calls without a closing marker
      mode_ = Mode::content;
      return true;
    }
    fail_block(out);
    return true;
  }
  if (f.syntax == CallSyntax::pythonic) {
    const size_t pos = buf_.find(f.block_close, i);
    if (pos == std::string::npos) return false;
    auto calls = pythonic_calls(std::string_view(buf_).substr(i, pos - i));
    if (!calls) {
      raw_ += buf_.substr(0, pos + f.block_close.size());
      buf_.erase(0, pos + f.block_close.size());
      const std::string text = raw_;
      raw_.clear();
      mode_ = Mode::content;
      emit_text(text, out);
      return true;
    }
    for (auto& c : *calls) emit_call(ParsedCall{c.id, c.name, dump_json(c.arguments, -1, InvalidUtf8::replace)}, out);
    buf_.erase(0, pos + f.block_close.size());
    mode_ = Mode::content;
    return true;
  }
  // A JSON body, maybe inside a ``` fence.
  if (i == buf_.size()) {
    if (eof && n_calls_ > 0 && raw_.empty()) mode_ = Mode::content;
    return false;
  }
  if (n_calls_ > 0 && raw_.empty()) {  // after the calls: their closing fence
    if (starts_at(buf_, i, "```")) {
      buf_.erase(0, i + 3);
      mode_ = Mode::content;
      trim_next_ = true;
      return true;
    }
    if (!eof && prefix_of(buf_, i, "```")) return false;
  }
  if (starts_at(buf_, i, "```")) {
    const size_t nl = buf_.find('\n', i);
    if (nl == std::string::npos) return false;
    i = nl + 1;
  } else if (prefix_of(buf_, i, "```") && !eof) {
    return false;
  }
  if (n_calls_ > 0 && raw_.empty() && i < buf_.size() && buf_[i] != '{' && buf_[i] != '[') {
    mode_ = Mode::content;  // text after a block whose close marker is optional
    return true;
  }
  const size_t end = json_value_end(buf_, i);
  if (end == kIncomplete) return false;
  std::optional<std::vector<CallJson>> calls;
  if (end != kNotJson) calls = calls_from_json_text(std::string_view(buf_).substr(i, end - i), f.name_key, f.args_key);
  if (!calls) {
    fail_block(out);
    return true;
  }
  for (auto& c : *calls) emit_call(ParsedCall{c.id, c.name, dump_json(c.arguments, -1, InvalidUtf8::replace)}, out);
  size_t k = skip_space(buf_, end);
  if (starts_at(buf_, k, "```")) k = skip_space(buf_, k + 3);
  buf_.erase(0, k);
  return true;  // again: the close marker, another call, or text
}

bool ReplyParser::in_call(std::vector<ReplyPart>& out, bool eof) {
  const ToolFormat& f = *o_.tools;
  auto after = [&]() {
    mode_ = f.block_open.empty() ? Mode::content : Mode::block;
    trim_next_ = true;  // whitespace between and after calls is not text
  };
  ParsedCall c;
  if (f.syntax == CallSyntax::name_json) {
    size_t p = 0;
    if (!f.id_end.empty()) {
      const size_t q = buf_.find(f.id_end);
      if (q == std::string::npos) {
        if (eof) fail_block(out);
        return eof;
      }
      c.id = trim(std::string_view(buf_).substr(0, q));
      p = q + f.id_end.size();
    }
    const size_t q = buf_.find(f.name_end, p);
    if (q == std::string::npos) {
      if (eof) fail_block(out);
      return eof;
    }
    c.name = trim(std::string_view(buf_).substr(p, q - p));
    if (f.strip_name) c.name = strip_kimi(c.name);
    p = q + f.name_end.size();
    if (!f.text_name.empty() && c.name == f.text_name) {  // ">>>all": what follows is text
      buf_.erase(0, p);
      raw_.clear();
      mode_ = Mode::content;
      return true;
    }
    const size_t end = json_value_end(buf_, p);
    if (end == kIncomplete) {
      if (eof) fail_block(out);
      return eof;
    }
    Json args = end == kNotJson ? Json() : parse_ordered_json(std::string_view(buf_).substr(p, end - p));
    if (end == kNotJson || !args.is_object()) {
      fail_block(out);
      return true;
    }
    size_t k = end;
    if (!f.call_close.empty()) {
      k = skip_space(buf_, end);
      if (starts_at(buf_, k, f.call_close)) k += f.call_close.size();
      else if (!eof && prefix_of(buf_, k, f.call_close)) return false;
      else k = end;
    }
    c.arguments = dump_json(args, -1, InvalidUtf8::replace);
    buf_.erase(0, k);
    emit_call(std::move(c), out);
    after();
    return true;
  }
  // The other syntaxes read the whole call up to its close marker.
  const size_t q = f.call_close.empty() ? std::string::npos : buf_.find(f.call_close);
  if (q == std::string::npos) {
    if (eof) fail_block(out);
    return eof;
  }
  const std::string body = buf_.substr(0, q);
  bool ok = parse_call_body(body, c);
  if (!ok) {
    raw_ += buf_.substr(0, q + f.call_close.size());
    buf_.erase(0, q + f.call_close.size());
    const std::string text = raw_;
    raw_.clear();
    mode_ = Mode::content;
    emit_text(text, out);
    return true;
  }
  buf_.erase(0, q + f.call_close.size());
  emit_call(std::move(c), out);
  after();
  return true;
}

bool ReplyParser::parse_call_body(std::string_view body, ParsedCall& c) {
  const ToolFormat& f = *o_.tools;
  if (f.syntax == CallSyntax::gemma) {
    auto g = gemma_call(body);
    if (!g) return false;
    c.name = g->name;
    c.arguments = dump_json(g->arguments, -1, InvalidUtf8::replace);
    return true;
  }
  if (f.syntax != CallSyntax::xml_params && f.syntax != CallSyntax::xml_nested) return false;
  size_t p = 0;
  if (!f.name_end.empty()) {
    const size_t n = body.find(f.name_end);
    if (n == std::string_view::npos) return false;
    c.name = trim(body.substr(0, n));
    p = n + f.name_end.size();
  } else {
    size_t n = std::min(body.find('\n', skip_space(body, 0)), body.find(f.key_open));
    if (n == std::string_view::npos) n = body.size();
    c.name = trim(body.substr(0, n));
    p = n;
  }
  if (c.name.empty()) return false;
  if (f.syntax == CallSyntax::xml_nested) {
    auto args = nested_arguments(body.substr(p), NestedTags{f.key_open, f.key_close, f.value_close}, o_.tool_defs, c.name);
    if (!args) return false;
    c.arguments = dump_json(*args, -1, InvalidUtf8::replace);
    return true;
  }
  Json args = Json::object();
  while (true) {
    const size_t ko = body.find(f.key_open, p);
    if (ko == std::string_view::npos) break;
    const size_t ks = ko + f.key_open.size();
    const size_t kc = body.find(f.key_close, ks);
    if (kc == std::string_view::npos) return false;
    const std::string key = trim(body.substr(ks, kc - ks));
    p = kc + f.key_close.size();
    if (!f.value_open.empty()) {
      const size_t vo = body.find(f.value_open, p);
      if (vo == std::string_view::npos) return false;
      p = vo + f.value_open.size();
    }
    const size_t vc = body.find(f.value_close, p);
    if (vc == std::string_view::npos) return false;
    args[key] = typed_value(o_.tool_defs, c.name, key, strip_newlines(body.substr(p, vc - p)));
    p = vc + f.value_close.size();
  }
  c.arguments = dump_json(args, -1, InvalidUtf8::replace);
  return true;
}

}  // namespace nurl::chat
