// Context: batch validation, splitting into forward-sized chunks, and the per-sequence cache
// bookkeeping around transformer_forward.
#include "engine/runtime/context.h"

#include <algorithm>

#include "engine/arch/transformer.h"
#include "engine/runtime/thread-pool.h"

namespace nurl {

Context::~Context() = default;

Result<std::unique_ptr<Context>> Context::create(std::shared_ptr<const Model> model, const ContextOptions& opts) {
  if (!model) return Error(Code::invalid_argument, "context: no model");
  if (opts.n_ctx <= 0) return Error(Code::invalid_argument, "context: n_ctx must be positive");
  if (opts.n_seq <= 0 || opts.n_seq > 4096) return Error(Code::invalid_argument, "context: n_seq out of range");
  if (opts.n_batch <= 0) return Error(Code::invalid_argument, "context: n_batch must be positive");
  std::unique_ptr<Context> ctx(new Context());
  const TransformerConfig& c = model->config();
  ctx->n_ctx_ = std::min(opts.n_ctx, c.n_ctx_train);
  ctx->n_batch_ = opts.n_batch;
  ctx->embeddings_ = opts.embeddings;
  ctx->want_logits_ = opts.logits;
  ctx->max_outputs_ = opts.max_outputs > 0 ? opts.max_outputs : opts.n_seq;
  ctx->n_pos_.assign(static_cast<size_t>(opts.n_seq), 0);
  ctx->pool_ = std::make_unique<ThreadPool>(opts.n_threads);
  ctx->pool_->set_adaptive(opts.adaptive_threads);
  ctx->state_ = ForwardState::create(c, ctx->n_ctx_, opts.n_seq, opts.n_batch, opts.kv_type,
                                     ctx->pool_->max_threads());
  if (ctx->want_logits_) ctx->logits_.assign(static_cast<size_t>(ctx->max_outputs_) * c.n_vocab, 0.0f);
  if (ctx->embeddings_) ctx->hidden_.assign(static_cast<size_t>(ctx->max_outputs_) * c.n_embd, 0.0f);
  ctx->model_ = std::move(model);
  return ctx;
}

int Context::n_threads() const { return pool_->n_threads(); }
void Context::set_n_threads(int n) { pool_->set_n_threads(n); }

std::span<const float> Context::logits(int i) const {
  const size_t nv = static_cast<size_t>(model_->n_vocab());
  return {logits_.data() + static_cast<size_t>(i) * nv, nv};
}

std::span<const float> Context::hidden(int i) const {
  const size_t ne = static_cast<size_t>(model_->n_embd());
  return {hidden_.data() + static_cast<size_t>(i) * ne, ne};
}

Result<void> Context::decode(std::span<const BatchEntry> batch) {
  const int n_vocab = model_->n_vocab();
  const int n_seq = static_cast<int>(n_pos_.size());
  // Validate everything before touching the cache.
  std::vector<int> next = n_pos_;
  int n_out = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchEntry& e = batch[i];
    const std::string where = "decode: batch entry " + std::to_string(i) + ": ";
    if (e.seq < 0 || e.seq >= n_seq)
      return Error(Code::invalid_argument, where + "sequence " + std::to_string(e.seq) + " out of range [0, " +
                                               std::to_string(n_seq) + ")");
    if (e.token < 0 || e.token >= n_vocab)
      return Error(Code::invalid_argument, where + "token " + std::to_string(e.token) + " out of range [0, " +
                                               std::to_string(n_vocab) + ")");
    int& np = next[static_cast<size_t>(e.seq)];
    if (e.pos != np)
      return Error(Code::invalid_argument, where + "position " + std::to_string(e.pos) + " of sequence " +
                                               std::to_string(e.seq) + ", expected " + std::to_string(np));
    if (np >= n_ctx_)
      return Error(Code::invalid_argument, where + "context full (" + std::to_string(n_ctx_) + " positions)");
    ++np;
    if (e.logits) ++n_out;
  }
  if (n_out > max_outputs_)
    return Error(Code::invalid_argument, "decode: " + std::to_string(n_out) + " entries want outputs, the context " +
                                             "was created for at most " + std::to_string(max_outputs_));

  const TransformerConfig& c = model_->config();
  std::vector<int32_t> tok, pos, seq;
  std::vector<int> out_rows;
  tok.reserve(static_cast<size_t>(n_batch_));
  pos.reserve(static_cast<size_t>(n_batch_));
  seq.reserve(static_cast<size_t>(n_batch_));
  n_outputs_ = 0;
  for (size_t b0 = 0; b0 < batch.size(); b0 += static_cast<size_t>(n_batch_)) {
    const size_t b1 = std::min(batch.size(), b0 + static_cast<size_t>(n_batch_));
    tok.clear();
    pos.clear();
    seq.clear();
    out_rows.clear();
    for (size_t i = b0; i < b1; ++i) {
      tok.push_back(batch[i].token);
      pos.push_back(batch[i].pos);
      seq.push_back(batch[i].seq);
      if (batch[i].logits) out_rows.push_back(static_cast<int>(i - b0));
    }
    float* lg = want_logits_ ? logits_.data() + static_cast<size_t>(n_outputs_) * c.n_vocab : nullptr;
    float* hd = embeddings_ ? hidden_.data() + static_cast<size_t>(n_outputs_) * c.n_embd : nullptr;
    transformer_forward(c, model_->weights(), model_->kernels(), *state_, *pool_, tok.data(), pos.data(), seq.data(),
                        static_cast<int>(tok.size()), out_rows, lg, hd);
    n_outputs_ += static_cast<int>(out_rows.size());
  }
  n_pos_ = std::move(next);
  return ok();
}

Result<std::span<const float>> Context::eval(std::span<const int32_t> tokens, int seq) {
  if (tokens.empty()) return Error(Code::invalid_argument, "eval: no tokens");
  if (seq < 0 || seq >= n_seq()) return Error(Code::invalid_argument, "eval: sequence out of range");
  if (!want_logits_) return Error(Code::invalid_argument, "eval: context was created without logits");
  std::vector<BatchEntry> batch(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i)
    batch[i] = BatchEntry{tokens[i], n_pos(seq) + static_cast<int32_t>(i), seq, i + 1 == tokens.size()};
  NURL_TRY(decode(batch));
  return logits(0);
}

void Context::clear(int seq) { n_pos_[static_cast<size_t>(seq)] = 0; }
void Context::clear_all() { std::fill(n_pos_.begin(), n_pos_.end(), 0); }
void Context::truncate(int seq, int n_pos) {
  int& np = n_pos_[static_cast<size_t>(seq)];
  np = std::clamp(n_pos, 0, np);
}

}  // namespace nurl
