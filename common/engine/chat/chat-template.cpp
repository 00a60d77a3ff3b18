// ChatTemplate: parse once, render per request; render_chat adds llama.cpp's conventions (system
// polyfill, BOS/EOS stripping).
#include "engine/chat/chat-template.h"

#include "engine/chat/jinja-json.h"

namespace nurl::chat {

struct ChatTemplate::Program {
  std::string source;
  jinja::Body body;
};

namespace {

constexpr const char* kSystemProbe = "<<nurl-system-probe-7f3a>>";
constexpr const char* kUserProbe = "<<nurl-user-probe-7f3a>>";

// Renders a probe conversation; true when the system marker shows up. When the template refuses
// the system message but renders a user-only chat, it has no system role. When it cannot render
// either, nothing is known and the conversation is passed through unchanged (returns true).
bool probe_system_role(const ChatTemplate& t) {
  RenderOptions opts;
  opts.limits.max_steps = 1'000'000;
  opts.clock = [] { return std::tm{}; };
  auto ctx = [](bool with_system) {
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (with_system) messages.push_back({{"role", "system"}, {"content", kSystemProbe}});
    messages.push_back({{"role", "user"}, {"content", kUserProbe}});
    return nlohmann::ordered_json{
        {"messages", messages}, {"add_generation_prompt", true}, {"bos_token", "<s>"}, {"eos_token", "</s>"}};
  };
  auto with = t.render(ctx(true), opts);
  if (with.ok()) return with->find(kSystemProbe) != std::string::npos;
  auto without = t.render(ctx(false), opts);
  return !without.ok();
}

std::string content_text(const nlohmann::ordered_json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && part.value("type", "") == "text" && part.contains("text") && part["text"].is_string())
        out += part["text"].get<std::string>();
  return out;
}

// llama.cpp's polyfill for templates without a system role: system text goes in front of the
// next user message, separated by "\n".
nlohmann::ordered_json fold_system_messages(const nlohmann::ordered_json& messages) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  std::string pending;
  bool have_pending = false;
  for (const auto& m : messages) {
    const std::string role = m.is_object() && m.contains("role") && m["role"].is_string() ? m["role"].get<std::string>() : "";
    if (role == "system") {
      pending += (have_pending ? "\n" : "") + content_text(m.value("content", nlohmann::ordered_json()));
      have_pending = true;
      continue;
    }
    if (role == "user" && have_pending) {
      nlohmann::ordered_json u = m;
      const auto& content = m.value("content", nlohmann::ordered_json());
      if (content.is_array()) {
        nlohmann::ordered_json parts = nlohmann::ordered_json::array();
        parts.push_back({{"type", "text"}, {"text", pending + "\n"}});
        for (const auto& p : content) parts.push_back(p);
        u["content"] = parts;
      } else {
        u["content"] = pending + "\n" + content_text(content);
      }
      out.push_back(std::move(u));
      pending.clear();
      have_pending = false;
      continue;
    }
    out.push_back(m);
  }
  if (have_pending) out.push_back({{"role", "user"}, {"content", pending}});
  return out;
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  NURL_ASSIGN(jinja::Body body, jinja::parse(source));
  auto p = std::make_shared<Program>();
  p->source = std::string(source);
  p->body = std::move(body);
  ChatTemplate t;
  t.program_ = std::move(p);
  t.supports_system_role_ = probe_system_role(t);
  return t;
}

const std::string& ChatTemplate::source() const { return program_->source; }

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context, const RenderOptions& opts) const {
  if (!context.is_object()) return Error(Code::invalid_argument, "chat template context must be a JSON object");
  jinja::Interp in(opts.limits, opts.clock);
  NURL_ASSIGN(std::shared_ptr<jinja::Scope> scope, in.make_globals());
  for (const auto& [k, v] : context.items()) {
    NURL_ASSIGN(jinja::Value x, jinja::from_json(in, v));
    scope->set(k, std::move(x));
  }
  return in.render(program_->body, scope);
}

Result<std::string> render_chat(const ChatTemplate& tmpl, const nlohmann::ordered_json& messages,
                                const ChatOptions& opts) {
  if (!messages.is_array()) return Error(Code::invalid_argument, "messages must be a JSON array");
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = tmpl.supports_system_role() ? messages : fold_system_messages(messages);
  if (!opts.tools.is_null()) ctx["tools"] = opts.tools;
  ctx["add_generation_prompt"] = opts.add_generation_prompt;
  ctx["bos_token"] = opts.bos_token;
  ctx["eos_token"] = opts.eos_token;
  if (opts.extra.is_object())
    for (const auto& [k, v] : opts.extra.items()) ctx[k] = v;
  NURL_ASSIGN(std::string out, tmpl.render(ctx, opts.render));
  if (opts.strip_leading_bos && !opts.bos_token.empty() && out.compare(0, opts.bos_token.size(), opts.bos_token) == 0)
    out.erase(0, opts.bos_token.size());
  if (opts.strip_trailing_eos && !opts.eos_token.empty() && out.size() >= opts.eos_token.size() &&
      out.compare(out.size() - opts.eos_token.size(), opts.eos_token.size(), opts.eos_token) == 0)
    out.erase(out.size() - opts.eos_token.size());
  return out;
}

}  // namespace nurl::chat
