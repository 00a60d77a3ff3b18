// Mean pooling + L2 normalisation of final hidden states (see embed.h).
#include "engine/runtime/embed.h"

#include <algorithm>
#include <cmath>

namespace nurl {

ContextOptions embedding_context_options(int n_ctx, int n_batch, int n_threads) {
  ContextOptions o;
  o.n_ctx = n_ctx;
  o.n_seq = 1;
  o.n_batch = n_batch;
  o.n_threads = n_threads;
  o.embeddings = true;
  o.logits = false;
  o.max_outputs = n_batch;
  return o;
}

Result<Embedding> embed(Context& ctx, std::span<const int32_t> tokens, bool truncate, int seq) {
  if (tokens.empty()) return Error(Code::invalid_argument, "embed: empty input (nothing to embed)");
  Embedding out;
  if (static_cast<int>(tokens.size()) > ctx.n_ctx()) {
    if (!truncate)
      return Error(Code::invalid_argument, "embed: input of " + std::to_string(tokens.size()) +
                                               " tokens exceeds the context length " + std::to_string(ctx.n_ctx()));
    tokens = tokens.first(static_cast<size_t>(ctx.n_ctx()));
    out.truncated = true;
  }
  const auto n_embd = static_cast<size_t>(ctx.model().n_embd());
  std::vector<double> sum(n_embd, 0.0);
  ctx.clear(seq);
  std::vector<BatchEntry> batch;
  for (size_t at = 0; at < tokens.size();) {
    const size_t n = std::min(tokens.size() - at, static_cast<size_t>(ctx.n_batch()));
    batch.clear();
    for (size_t i = 0; i < n; ++i)
      batch.push_back({tokens[at + i], static_cast<int32_t>(at + i), seq, true});
    if (auto r = ctx.decode(batch); !r.ok()) return r.error().context("embed");
    for (int row = 0; row < static_cast<int>(n); ++row) {
      std::span<const float> h = ctx.hidden(row);
      if (h.size() != n_embd)
        return Error(Code::internal, "embed: the context keeps no hidden states (create it with "
                                     "embedding_context_options)");
      for (size_t j = 0; j < n_embd; ++j) sum[j] += h[j];
    }
    at += n;
  }
  ctx.clear(seq);
  double norm = 0;
  for (double& v : sum) {
    v /= static_cast<double>(tokens.size());
    norm += v * v;
  }
  norm = std::sqrt(norm);
  out.values.resize(n_embd);
  for (size_t j = 0; j < n_embd; ++j) out.values[j] = static_cast<float>(norm > 0 ? sum[j] / norm : 0.0);
  out.n_tokens = static_cast<int32_t>(tokens.size());
  return out;
}

}  // namespace nurl
