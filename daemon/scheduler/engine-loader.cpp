#include "scheduler/engine-loader.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/chat/chat-template.h"
#include "engine/gguf/gguf.h"
#include "engine/runtime/context.h"
#include "engine/runtime/embed.h"
#include "engine/runtime/model.h"
#include "engine/runtime/sampler.h"
#include "engine/tokenizer/tokenizer.h"

namespace nurl::sched {

namespace {

Options engine_options(const Sampling& s, int n_ctx) {
  Options o;
  o.num_ctx = n_ctx;
  o.temperature = s.temperature;
  o.top_k = s.top_k;
  o.top_p = s.top_p;
  o.min_p = s.min_p;
  o.typical_p = s.typical_p;
  o.repeat_penalty = s.repeat_penalty;
  o.repeat_last_n = s.repeat_last_n;
  o.presence_penalty = s.presence_penalty;
  o.frequency_penalty = s.frequency_penalty;
  o.seed = s.seed_set ? static_cast<int64_t>(s.seed & 0x7fffffffffffffffull) : -1;
  return o;
}

// The engine's Context (KV cache of n_slots sequences) with one Sampler per slot. Sequences
// never influence each other: the Context guarantees per-sequence outputs in a batch, and each
// slot samples with its own RNG and penalty window.
class EngineRunner final : public BatchRunner {
 public:
  EngineRunner(std::shared_ptr<const Model> model, std::unique_ptr<Context> ctx)
      : model_(std::move(model)), ctx_(std::move(ctx)), samplers_(static_cast<size_t>(ctx_->n_seq())) {}

  int n_slots() const override { return ctx_->n_seq(); }
  int n_ctx() const override { return ctx_->n_ctx(); }

  void reset(int slot, const Sampling& s) override {
    ctx_->clear(slot);
    samplers_[static_cast<size_t>(slot)] = std::make_unique<Sampler>(engine_options(s, ctx_->n_ctx()), model_->n_vocab());
  }

  Result<int32_t> prefill(int slot, std::span<const int32_t> tokens, bool want_next) override {
    auto& sampler = *samplers_[static_cast<size_t>(slot)];
    const size_t chunk = static_cast<size_t>(std::max(1, ctx_->n_batch()));
    for (size_t i = 0; i < tokens.size(); i += chunk) {
      size_t n = std::min(chunk, tokens.size() - i);
      batch_.clear();
      int32_t pos = ctx_->n_pos(slot);
      for (size_t k = 0; k < n; ++k)
        batch_.push_back({tokens[i + k], pos + static_cast<int32_t>(k), slot, want_next && i + k + 1 == tokens.size()});
      NURL_TRY(ctx_->decode(batch_));
    }
    sampler.accept(tokens);
    if (!want_next) return int32_t{-1};
    return sampler.sample(ctx_->logits(0)).id;
  }

  Result<void> decode(std::span<const SlotToken> batch, std::span<int32_t> next) override {
    batch_.clear();
    for (const auto& st : batch) {
      samplers_[static_cast<size_t>(st.slot)]->accept(st.token);
      batch_.push_back({st.token, ctx_->n_pos(st.slot), st.slot, true});
    }
    NURL_TRY(ctx_->decode(batch_));
    for (size_t i = 0; i < batch.size(); ++i)
      next[i] = samplers_[static_cast<size_t>(batch[i].slot)]->sample(ctx_->logits(static_cast<int>(i))).id;
    return ok();
  }

  Result<std::vector<float>> embed(int, std::span<const int32_t> tokens) override {
    if (!embed_ctx_) {
      NURL_ASSIGN(embed_ctx_, Context::create(model_, embedding_context_options(ctx_->n_ctx())));
    }
    NURL_ASSIGN(Embedding e, nurl::embed(*embed_ctx_, tokens, true, 0));
    return std::move(e.values);
  }

 private:
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<Context> embed_ctx_;  // created on the first embed request
  std::vector<std::unique_ptr<Sampler>> samplers_;
  std::vector<BatchEntry> batch_;
};

class EngineModel final : public LoadedModel {
 public:
  EngineModel(std::shared_ptr<const Model> model, Tokenizer tok, chat::ModelChat chat)
      : model_(std::move(model)), tok_(std::move(tok)), chat_(std::move(chat)) {
    facts_.architecture = model_->arch();
    facts_.size_bytes = model_->file_size();
    facts_.n_ctx_train = model_->n_ctx_train();
    facts_.can_embed = true;
    facts_.has_chat_template = chat_.chat_template.has_value();
  }

  const ModelFacts& facts() const override { return facts_; }

  Result<std::vector<int32_t>> tokenize(std::string_view text, bool add_special) const override {
    return tok_.encode(text, add_special, /*parse_special=*/true);
  }
  std::string token_text(int32_t id) const override { return tok_.token_to_piece(id, false); }
  bool is_end_of_generation(int32_t id) const override { return tok_.is_eog(id); }

  Result<std::string> render_chat(const std::vector<ChatMessage>& messages, const std::string& template_override,
                                  bool add_generation_prompt) const override {
    std::optional<chat::ChatTemplate> parsed;
    const chat::ChatTemplate* tmpl = nullptr;
    if (!template_override.empty()) {
      NURL_ASSIGN(parsed, chat::ChatTemplate::parse(template_override));
      tmpl = &*parsed;
    } else if (chat_.chat_template) {
      tmpl = &*chat_.chat_template;
    } else {
      return Error(Code::invalid_argument, "this model has no chat template");
    }
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
    for (const auto& m : messages) msgs.push_back({{"role", m.role}, {"content", m.content}});
    chat::ChatOptions opts;
    opts.add_generation_prompt = add_generation_prompt;
    opts.bos_token = chat_.bos_token;
    opts.eos_token = chat_.eos_token;
    opts.strip_leading_bos = tok_.add_bos();
    opts.strip_trailing_eos = tok_.add_eos();
    return chat::render_chat(*tmpl, msgs, opts);
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
  std::shared_ptr<const Model> model_;
  Tokenizer tok_;
  chat::ModelChat chat_;
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

ModelLoader engine_loader() {
  ModelLoader l;
  l.estimate = estimate_gguf_bytes;
  l.load = [](const LoadSpec& spec) -> Result<std::shared_ptr<LoadedModel>> {
    NURL_ASSIGN(auto model, Model::load(spec.path));
    NURL_ASSIGN(auto tok, Tokenizer::from_gguf(model->file()));
    NURL_ASSIGN(auto chat, chat::load_model_chat(model->file()));
    return std::shared_ptr<LoadedModel>(std::make_shared<EngineModel>(std::move(model), std::move(tok), std::move(chat)));
  };
  return l;
}

}  // namespace nurl::sched
