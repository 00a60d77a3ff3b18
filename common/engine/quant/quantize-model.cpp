// quantize_model: llama-quantize's job over our reference quantisers. Tensors are written in
// llama-quantize's order (the non-layer tensors by name, then each layer's by name), metadata is
// copied with general.quantization_version and general.file_type set last, so for deterministic
// types the output is byte for byte the file llama-quantize writes from the same input.
#include "engine/quant/quantize-model.h"

#include <algorithm>
#include <cstring>

#include "engine/convert/output-file.h"
#include "engine/gguf/gguf-writer.h"
#include "engine/quant/mixture.h"
#include "engine/quant/quant.h"
#include "engine/quant/row-encoder.h"

namespace nurl::quant {

namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's block layouts (GGML_QNT_VERSION)
constexpr size_t kCopyChunk = size_t(8) << 20;

// "blk.<n>." → n; -1 for the tensors outside the layers.
int layer_of(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  int n = 0;
  size_t i = 4;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) n = n * 10 + (name[i] - '0');
  return i > 4 ? n : -1;
}

struct Planned {
  const gguf::TensorInfo* src;
  GgmlType type;
};

std::string type_list() {
  std::string s;
  for (const auto& t : quantize_types()) s += (s.empty() ? "" : ", ") + t;
  return s;
}

}  // namespace

std::vector<std::string> quantize_types() {
  std::vector<std::string> v;
  for (const FileType& ft : file_types()) v.emplace_back(ft.name);
  return v;
}

Result<void> quantize_model(const std::filesystem::path& in, const std::filesystem::path& out,
                            const QuantizeOptions& opts) {
  const std::string where = "quantising " + in.string();
  const FileType* ft = find_file_type(opts.type);
  if (!ft) return Error(Code::invalid_argument, where + ": unknown type \"" + opts.type + "\" (one of " + type_list() + ")");
  if (!opts.imatrix.empty())
    return Error(Code::unsupported, where + ": importance matrices (--imatrix) are not supported");
  std::error_code ec;
  if (std::filesystem::equivalent(in, out, ec)) return Error(Code::invalid_argument, where + ": output is the input");
  NURL_ASSIGN(gguf::File src, gguf::File::open(in.string()));

  // Plan: llama-quantize's order and per-tensor types.
  std::vector<const gguf::TensorInfo*> order;
  for (const auto& t : src.tensors()) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const gguf::TensorInfo* a, const gguf::TensorInfo* b) {
    const int la = layer_of(a->name), lb = layer_of(b->name);
    return la != lb ? la < lb : a->name < b->name;
  });
  ModelFacts facts;
  NURL_ASSIGN(std::string arch, src.get_string_or("general.architecture", ""));
  NURL_ASSIGN(uint32_t n_head, src.get_u32_or(arch + ".attention.head_count", 0));
  NURL_ASSIGN(uint32_t n_head_kv, src.get_u32_or(arch + ".attention.head_count_kv", n_head));
  facts.n_head = int(n_head);
  facts.n_head_kv = int(n_head_kv);
  facts.has_output = src.tensor("output.weight") != nullptr;
  for (const auto* t : order) {
    if (t->name.find("attn_v.weight") != std::string::npos || t->name.find("attn_qkv.weight") != std::string::npos)
      ++facts.n_attn_v;
    if (t->name.find("ffn_down") != std::string::npos) ++facts.n_ffn_down;
  }
  TypeChooser chooser(*ft, opts.pure, facts);
  std::vector<Planned> plan;
  for (const auto* t : order) {
    std::optional<GgmlType> want = chooser.next(t->name, std::span<const uint64_t>(t->ne.data(), t->n_dims));
    const GgmlType type = want.value_or(t->type);
    if (type != t->type) {
      const QuantTraits* from = quant_traits(t->type);
      if (!from || !from->dequant_row)
        return Error(Code::unsupported, where + ": tensor " + t->name + " is " + std::string(type_name(t->type)) +
                                            ", which cannot be dequantised");
      const QuantTraits* to = quant_traits(type);
      if (!to || !to->quantize_row)
        return Error(Code::unsupported, where + ": tensor " + t->name + " would be " + std::string(type_name(type)) +
                                            ", which has no quantiser here");
    }
    plan.push_back({t, type});
  }

  gguf::Writer w(3);
  for (const auto& kv : src.metadata())
    if (kv.key != "general.quantization_version" && kv.key != "general.file_type") w.add(kv.key, kv.value);
  w.add_u32("general.quantization_version", kQuantizationVersion);
  w.add_u32("general.file_type", ft->ftype);
  for (const auto& p : plan) w.add_tensor(p.src->name, p.type, std::span<const uint64_t>(p.src->ne.data(), p.src->n_dims));
  NURL_ASSIGN(convert::OutputFile file, convert::OutputFile::open(w, out, opts.resume, opts.on_checkpoint));

  convert::Progress progress;
  progress.stage = "tensors";
  progress.n_tensors = int(plan.size());
  for (const auto& t : w.tensors()) progress.bytes_total += t.n_bytes;
  for (size_t i = 0; i < file.first_tensor(); ++i) progress.bytes_done += w.tensors()[i].n_bytes;
  auto cancelled = [&]() -> Result<void> {
    file.abandon(opts.keep_partial_on_cancel);
    return Error(Code::cancelled, where + ": cancelled");
  };
  auto report = [&](uint64_t bytes) {
    progress.bytes_done += bytes;
    return !opts.on_progress || opts.on_progress(progress);
  };

  RowEncoder enc(opts.threads);
  for (size_t i = file.first_tensor(); i < plan.size(); ++i) {
    const gguf::TensorInfo& t = *plan[i].src;
    progress.tensor = t.name;
    progress.tensor_index = int(i);
    bool go_on = true;
    const uint64_t src_row = row_bytes(type_info(t.type), t.ne[0]);
    const uint64_t out_row = row_bytes(type_info(plan[i].type), t.ne[0]);
    uint64_t rows_done = 0;
    auto sink = [&](std::span<const uint8_t> bytes) -> Result<void> {
      NURL_TRY(file.write(bytes));
      const uint64_t rows = bytes.size() / out_row;  // the input rows behind them leave memory
      src.release(t, rows_done * src_row, rows * src_row);
      rows_done += rows;
      go_on = report(bytes.size());
      return go_on ? Result<void>() : Error(Code::cancelled, "cancelled");
    };
    Result<void> r;
    if (plan[i].type == t.type) {
      for (uint64_t at = 0; at < t.n_bytes && r.ok(); at += kCopyChunk) {
        const size_t n = size_t(std::min<uint64_t>(kCopyChunk, t.n_bytes - at));
        r = sink({t.data + at, n});
      }
    } else {
      const QuantTraits* from = quant_traits(t.type);
      r = enc.encode(plan[i].type, t.ne[0], t.n_rows(),
                     [&](uint64_t r0, uint64_t n, float* dst) -> Result<void> {
                       for (uint64_t k = 0; k < n; ++k)
                         from->dequant_row(t.data + (r0 + k) * src_row, dst + k * t.ne[0], int64_t(t.ne[0]));
                       return {};
                     },
                     sink);
    }
    if (!go_on) return cancelled();
    if (!r.ok()) return r.error().context(where + ": tensor " + t.name);
    src.release(t);
  }
  progress.stage = "finishing";
  progress.tensor.clear();
  if (opts.on_progress && !opts.on_progress(progress)) return cancelled();
  NURL_TRY(file.finish());
  return {};
}

}  // namespace nurl::quant
