#include "scheduler/engine-loader.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/json-text.h"
#include "engine/chat/chat-template.h"
#include "engine/chat/reply-format.h"
#include "engine/chat/reply-parser.h"
#include "engine/gguf/gguf.h"
#include "engine/runtime/constraints.h"
#include "engine/runtime/context.h"
#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"
#include "scheduler/engine-runner.h"

namespace nurl::sched {

namespace {

using Json = nlohmann::ordered_json;

// The engine's reply parser behind the scheduler's interface.
class EngineReplyParser final : public ReplyParser {
 public:
  explicit EngineReplyParser(chat::ParserOptions o) : p_(std::move(o)), markers_(p_.markers()) {}

  void push(std::string_view text, std::vector<ReplyPiece>& out) override {
    parts_.clear();
    p_.push(text, parts_);
    convert(out);
  }
  void finish(std::vector<ReplyPiece>& out) override {
    parts_.clear();
    p_.finish(parts_);
    convert(out);
  }
  bool thinking() const override { return p_.thinking(); }
  bool thought() const override { return p_.thought(); }
  const std::vector<std::string>& markers() const override { return markers_; }
  std::string open_thinking() override { return p_.begin_thinking(); }
  std::string close_thinking_text() const override { return p_.thinking_close(); }

 private:
  void convert(std::vector<ReplyPiece>& out) {
    for (auto& part : parts_) {
      ReplyPiece r;
      r.kind = part.kind == chat::ReplyPart::Kind::tool_call ? ReplyPiece::Kind::tool_call
               : part.kind == chat::ReplyPart::Kind::thinking ? ReplyPiece::Kind::thinking
                                                              : ReplyPiece::Kind::text;
      r.text = std::move(part.text);
      r.call.id = std::move(part.call.id);
      r.call.name = std::move(part.call.name);
      r.call.arguments = std::move(part.call.arguments);
      out.push_back(std::move(r));
    }
  }
  chat::ReplyParser p_;
  std::vector<std::string> markers_;
  std::vector<chat::ReplyPart> parts_;
};

// A message as templates read it (Hugging Face conventions): assistant tool calls with their
// arguments as an object, earlier reasoning as reasoning_content (and thinking), tool results
// with tool_call_id and name.
Json message_json(const ChatMessage& m) {
  Json j{{"role", m.role}, {"content", m.content}};
  if (!m.thinking.empty()) {
    j["reasoning_content"] = m.thinking;
    j["thinking"] = m.thinking;
  }
  if (!m.tool_calls.empty()) {
    Json calls = Json::array();
    for (const auto& c : m.tool_calls) {
      Json args = parse_ordered_json(c.arguments);
      if (args.is_discarded()) args = c.arguments;
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", args}}}});
    }
    j["tool_calls"] = calls;
  }
  if (!m.tool_call_id.empty()) j["tool_call_id"] = m.tool_call_id;
  if (!m.tool_name.empty()) j["name"] = m.tool_name;
  return j;
}

bool is_level(const std::string& v) { return v == "low" || v == "medium" || v == "high"; }

class EngineModel final : public LoadedModel {
 public:
  EngineModel(std::shared_ptr<const Model> model, Tokenizer tok, chat::ModelChat chat)
      : model_(std::move(model)), tok_(std::move(tok)), chat_(std::move(chat)), constraints_(tok_) {
    facts_.architecture = model_->arch();
    facts_.size_bytes = model_->file_size();
    facts_.n_ctx_train = model_->n_ctx_train();
    facts_.can_embed = true;
    facts_.has_chat_template = chat_.chat_template.has_value();
    if (chat_.chat_template) format_ = chat::detect_reply_format(chat_.chat_template->source());
    facts_.tools = format_.can_call_tools();
    facts_.thinking = format_.can_think();
    if (format_.tools) facts_.tool_format = format_.tools->family;
    if (format_.think) facts_.think_format = format_.think->family;
    facts_.kernels = model_->kernels().name;
    if (model_->packed_bytes() > 0) facts_.kernels += ", " + std::to_string(model_->packed_bytes() >> 20) + " MiB packed";
  }

  const ModelFacts& facts() const override { return facts_; }
  ModelFacts template_facts(const std::string& template_override) const override {
    if (template_override.empty()) return facts_;
    ModelFacts f = facts_;
    const chat::ReplyFormat fmt = chat::detect_reply_format(template_override);
    f.tools = fmt.can_call_tools();
    f.thinking = fmt.can_think();
    f.tool_format = fmt.tools ? std::string(fmt.tools->family) : "";
    f.think_format = fmt.think ? std::string(fmt.think->family) : "";
    return f;
  }

  Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special) const override {
    return tok_.encode(text, add_special, /*parse_special=*/true);
  }
  std::string token_text(int32_t id) const override { return tok_.token_to_piece(id, false); }
  std::string control_text(int32_t id) const override {
    if (id < 0 || id >= tok_.n_vocab() || tok_.token_type(id) != TokenType::control) return {};
    return std::string(tok_.token_text(id));
  }
  bool is_end_of_generation(int32_t id) const override { return tok_.is_eog(id); }

  Result<std::string> render_chat(const std::vector<ChatMessage>& messages, const ChatRender& r) const override {
    std::optional<chat::ChatTemplate> parsed;
    const chat::ChatTemplate* tmpl = nullptr;
    const chat::ReplyFormat fmt = format_for(r.template_override);
    if (!r.template_override.empty()) {
      NURL_ASSIGN(parsed, chat::ChatTemplate::parse(r.template_override));
      tmpl = &*parsed;
    } else if (chat_.chat_template) {
      tmpl = &*chat_.chat_template;
    } else {
      return Error(Code::invalid_argument, "this model has no chat template");
    }
    Json msgs = Json::array();
    for (const auto& m : messages) msgs.push_back(message_json(m));
    chat::ChatOptions opts;
    opts.add_generation_prompt = r.add_generation_prompt;
    opts.bos_token = chat_.bos_token;
    opts.eos_token = chat_.eos_token;
    opts.strip_leading_bos = tok_.add_bos();
    opts.strip_trailing_eos = tok_.add_eos();
    if (!r.tools.empty()) {
      opts.tools = parse_ordered_json(r.tools);
      if (opts.tools.is_discarded() || !opts.tools.is_array())
        return Error(Code::invalid_argument, "tools must be a JSON array");
    }
    if (r.think) {
      const bool on = *r.think != "false";
      if (!fmt.think_var.empty()) opts.extra[fmt.think_var] = on;
      if (fmt.think_levels && is_level(*r.think)) opts.extra["reasoning_effort"] = *r.think;
    }
    return chat::render_chat(*tmpl, msgs, opts);
  }

  std::unique_ptr<ReplyParser> reply_parser(const ReplyRequest& r) const override {
    const chat::ReplyFormat fmt = format_for(r.template_override);
    chat::ParserOptions o;
    o.think = fmt.think;
    if (!r.tools.empty() && !r.constrained_answer && fmt.tools) {
      o.tools = fmt.tools;
      o.tool_defs = parse_ordered_json(r.tools);
      if (o.tool_defs.is_discarded()) o.tool_defs = Json::array();
      o.starts_in_call = chat::prompt_ends_in_call(r.rendered, *o.tools);
    }
    if (o.think) o.starts_in_thinking = chat::prompt_ends_in_thinking(r.rendered, *o.think);
    if (!o.tools && !o.think) return nullptr;
    return std::make_unique<EngineReplyParser>(std::move(o));
  }

  Result<std::shared_ptr<const OutputConstraint>> compile_constraint(const ConstraintRequest& r) const override {
    Result<std::shared_ptr<grammar::TokenFilter>> f = Error(Code::internal, "nothing to constrain");
    if (!r.format.empty()) {
      f = constraints_.format(r.format);
    } else if (!r.tools.empty()) {
      const chat::ReplyFormat fmt = format_for(r.template_override);
      if (!fmt.tools) return Error(Code::invalid_argument, "this model's template has no tool-call format");
      chat::ToolGrammarOptions o;
      if (r.tool_choice != "required") o.only = r.tool_choice;
      o.parallel = r.parallel_tool_calls;
      f = constraints_.tool_call(*fmt.tools, r.tools, o);
    }
    if (!f.ok()) return f.error();
    return std::shared_ptr<const OutputConstraint>(std::make_shared<EngineConstraint>(std::move(*f)));
  }

  Result<std::unique_ptr<BatchRunner>> make_runner(int n_slots, int n_ctx) override {
    ContextOptions co;
    co.n_ctx = n_ctx;
    co.n_seq = n_slots;
    co.max_outputs = n_slots;
    NURL_ASSIGN(auto ctx, Context::create(model_, co));
    return std::unique_ptr<BatchRunner>(std::make_unique<EngineRunner>(model_, std::move(ctx)));
  }

 private:
  chat::ReplyFormat format_for(const std::string& template_override) const {
    return template_override.empty() ? format_ : chat::detect_reply_format(template_override);
  }

  std::shared_ptr<const Model> model_;
  Tokenizer tok_;
  chat::ModelChat chat_;
  chat::ReplyFormat format_;
  mutable ConstraintCompiler constraints_;
  ModelFacts facts_;
};

}  // namespace

Result<uint64_t> estimate_gguf_bytes(const LoadSpec& spec) {
  NURL_ASSIGN(auto f, gguf::File::open(spec.path));
  NURL_ASSIGN(std::string arch, f.get_string("general.architecture"));
  NURL_ASSIGN(uint32_t n_layer, f.get_u32(arch + ".block_count"));
  NURL_ASSIGN(uint32_t n_embd, f.get_u32(arch + ".embedding_length"));
  NURL_ASSIGN(uint32_t n_head, f.get_u32(arch + ".attention.head_count"));
  NURL_ASSIGN(uint32_t n_head_kv, f.get_u32_or(arch + ".attention.head_count_kv", n_head));
  NURL_ASSIGN(uint32_t head_dim, f.get_u32_or(arch + ".attention.key_length", n_head ? n_embd / n_head : 0));
  NURL_ASSIGN(uint32_t n_ctx_train, f.get_u32_or(arch + ".context_length", static_cast<uint32_t>(spec.n_ctx)));
  std::error_code ec;
  uint64_t file_bytes = std::filesystem::file_size(spec.path, ec);
  if (ec) return Error(Code::io, spec.path + ": " + ec.message());
  uint64_t n_ctx = std::min<uint64_t>(static_cast<uint64_t>(spec.n_ctx), n_ctx_train ? n_ctx_train : spec.n_ctx);
  // f16 keys and values (the Context's default cache type).
  uint64_t kv = 2ull * n_layer * n_ctx * static_cast<uint64_t>(spec.n_parallel) * n_head_kv * head_dim * 2;
  return file_bytes + kv;
}

ModelLoader engine_loader(const LoadOptions& opts) {
  ModelLoader l;
  l.estimate = estimate_gguf_bytes;
  l.load = [opts](const LoadSpec& spec) -> Result<std::shared_ptr<LoadedModel>> {
    NURL_ASSIGN(auto model, Model::load(spec.path, opts));
    NURL_ASSIGN(auto tok, Tokenizer::from_gguf(model->file()));
    NURL_ASSIGN(auto chat, chat::load_model_chat(model->file()));
    return std::shared_ptr<LoadedModel>(std::make_shared<EngineModel>(std::move(model), std::move(tok), std::move(chat)));
  };
  return l;
}

}  // namespace nurl::sched
