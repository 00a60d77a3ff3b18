// convert_checkpoint: checkpoint → plan (arch mapping) + tokenizer keys → GGUF declarations →
// every tensor streamed row chunk by row chunk from the mapped shards through the RowEncoder into
// the output file, with progress, cancel, checkpoints and resume (see convert.h).
#include "engine/convert/convert.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "engine/convert/arch-map.h"
#include "engine/convert/checkpoint.h"
#include "engine/convert/hf-tokenizer.h"
#include "engine/convert/output-file.h"
#include "engine/gguf/gguf-writer.h"
#include "engine/quant/blocks.h"
#include "engine/quant/mixture.h"
#include "engine/quant/row-encoder.h"

namespace nurl::convert {

namespace {

constexpr uint32_t kQuantizationVersion = 2;

struct OutType {
  std::string name;
  uint32_t ftype = 7;
  const quant::FileType* mixture = nullptr;  // quantisation types: llama-quantize's choices
  GgmlType plain = GgmlType::Q8_0;           // the converter's own types
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<OutType> parse_out_type(const std::string& name) {
  struct Plain { const char* name; GgmlType t; uint32_t ftype; };
  static constexpr Plain kPlain[] = {{"f32", GgmlType::F32, 0}, {"f16", GgmlType::F16, 1}, {"bf16", GgmlType::BF16, 32},
                                     {"q8_0", GgmlType::Q8_0, 7}};
  OutType o;
  o.name = lower(name);
  for (const auto& p : kPlain)
    if (o.name == p.name) {
      o.plain = p.t;
      o.ftype = p.ftype;
      return o;
    }
  o.mixture = quant::find_file_type(name);
  if (!o.mixture) {
    std::string known;
    for (const auto& t : convert_types()) known += (known.empty() ? "" : ", ") + t;
    return Error(Code::invalid_argument, "unknown output type \"" + name + "\" (one of " + known + ")");
  }
  o.ftype = o.mixture->ftype;
  return o;
}

// The type of each planned tensor: 1-D stays F32; matrices get the converter's type (F16 when a
// row does not fit q8_0's blocks), or a mixture's per-tensor choice.
std::vector<GgmlType> tensor_types(const ArchPlan& plan, const OutType& out) {
  std::vector<GgmlType> types;
  std::optional<quant::TypeChooser> chooser;
  if (out.mixture) {
    quant::ModelFacts facts;
    facts.n_head = plan.n_head;
    facts.n_head_kv = plan.n_head_kv;
    facts.has_output = !plan.tied_output;
    for (const auto& t : plan.tensors) {
      if (t.name.find("attn_v.weight") != std::string::npos || t.name.find("attn_qkv.weight") != std::string::npos)
        ++facts.n_attn_v;
      if (t.name.find("ffn_down") != std::string::npos) ++facts.n_ffn_down;
    }
    chooser.emplace(*out.mixture, false, facts);
  }
  for (const auto& t : plan.tensors) {
    if (!t.matrix) {
      types.push_back(GgmlType::F32);
    } else if (chooser) {
      types.push_back(chooser->next(t.name, t.ne).value_or(GgmlType::F32));
    } else {
      types.push_back(out.plain == GgmlType::Q8_0 ? quant::fallback_type(GgmlType::Q8_0, t.ne[0]) : out.plain);
    }
  }
  return types;
}

// Row `o` of the output takes row src_row(o) of the checkpoint tensor. rope_permute: within each
// head of d rows, HF row s·d/2 + i (half s, pair i) goes to GGML row 2i + s.
uint64_t src_row(const PlannedTensor& t, uint64_t o) {
  if (t.transform != Transform::rope_permute) return o;
  const uint64_t d = t.ne[1] / uint64_t(t.n_head);
  const uint64_t h = o / d, j = o % d;
  return h * d + (j % 2) * (d / 2) + j / 2;
}

void to_f32(StDtype dt, const uint8_t* src, float* dst, uint64_t n) {
  switch (dt) {
    case StDtype::F32: std::memcpy(dst, src, n * 4); break;
    case StDtype::F16:
      for (uint64_t i = 0; i < n; ++i) {
        f16_bits h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = fp16_to_f32(h);
      }
      break;
    case StDtype::BF16:
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, src + 2 * i, 2);
        const uint32_t bits = uint32_t(b) << 16;
        std::memcpy(&dst[i], &bits, 4);
      }
      break;
    default: std::fill(dst, dst + n, 0.0f); break;  // refused by the mapping before
  }
}

// The checkpoint directory's name ("Phi-3-mini-4k-instruct"): general.name, which llama.cpp (and
// our tokenizer) also consult for per-model tokenizer behaviour.
std::string dir_name(const std::filesystem::path& dir) {
  const std::filesystem::path p = dir.lexically_normal();
  std::string base = p.filename().string();
  if (base.empty()) base = p.parent_path().filename().string();
  return base.empty() ? "model" : base;
}

// A store name from it: lower case, characters outside [a-z0-9._-] as '-'.
std::string model_name(const std::filesystem::path& dir) {
  std::string out;
  for (char c : lower(dir_name(dir))) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '-';
  return out;
}

}  // namespace

std::vector<std::string> convert_types() {
  std::vector<std::string> v = {"f32", "f16", "bf16", "q8_0"};
  for (const auto& ft : quant::file_types())
    if (ft.base != GgmlType::F32 && ft.base != GgmlType::F16 && ft.base != GgmlType::BF16) v.push_back(lower(std::string(ft.name)));
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

Result<CheckpointInfo> inspect_checkpoint(const std::filesystem::path& hf_dir) {
  NURL_ASSIGN(Checkpoint ck, Checkpoint::open(hf_dir));
  NURL_ASSIGN(const ArchMapping* m, find_mapping(ck.config()));
  CheckpointInfo info;
  info.architecture = std::string(m->arch);
  info.hf_class = std::string(m->hf_class);
  info.bytes = ck.weight_bytes();
  info.default_name = model_name(hf_dir);
  return info;
}

Result<void> convert_checkpoint(const std::filesystem::path& hf_dir, const std::filesystem::path& out,
                                const ConvertOptions& opts) {
  const std::string where = "converting " + hf_dir.string();
  auto fail = [&](const Error& e) { return e.context(where); };
  NURL_ASSIGN(OutType out_type, parse_out_type(opts.out_type));
  Progress progress;
  auto report = [&]() { return !opts.on_progress || opts.on_progress(progress); };
  progress.stage = "reading checkpoint";
  if (!report()) return Error(Code::cancelled, where + ": cancelled");

  auto ck = Checkpoint::open(hf_dir);
  if (!ck.ok()) return fail(ck.error());
  auto mapping = find_mapping(ck->config());
  if (!mapping.ok()) return fail(mapping.error());
  auto plan = (*mapping)->plan(*ck);
  if (!plan.ok()) return fail(plan.error());
  progress.stage = "tokenizer";
  if (!report()) return Error(Code::cancelled, where + ": cancelled");
  VocabOptions vo;
  vo.vocab_size = plan->vocab_size;
  vo.pad_as_unknown = plan->arch == "phi3";
  auto tok = read_tokenizer(hf_dir, vo);
  if (!tok.ok()) return fail(tok.error());

  gguf::Writer w(3);
  w.add_string("general.architecture", plan->arch);
  w.add_string("general.type", "model");
  w.add_string("general.name", dir_name(hf_dir));
  for (auto& kv : plan->kv) w.add(kv.key, std::move(kv.value));
  w.add_u32("general.file_type", out_type.ftype);
  w.add_u32("general.quantization_version", kQuantizationVersion);
  for (auto& kv : *tok) w.add(kv.key, std::move(kv.value));
  const std::vector<GgmlType> types = tensor_types(*plan, out_type);
  for (size_t i = 0; i < plan->tensors.size(); ++i) w.add_tensor(plan->tensors[i].name, types[i], plan->tensors[i].ne);
  auto file = OutputFile::open(w, out, opts.resume, opts.on_checkpoint);
  if (!file.ok()) return fail(file.error());

  progress.stage = "tensors";
  progress.n_tensors = int(plan->tensors.size());
  for (const auto& t : w.tensors()) progress.bytes_total += t.n_bytes;
  for (size_t i = 0; i < file->first_tensor(); ++i) progress.bytes_done += w.tensors()[i].n_bytes;
  auto cancelled = [&]() -> Result<void> {
    file->abandon(opts.keep_partial_on_cancel);
    return Error(Code::cancelled, where + ": cancelled");
  };

  quant::RowEncoder enc(opts.threads);
  for (size_t i = file->first_tensor(); i < plan->tensors.size(); ++i) {
    const PlannedTensor& t = plan->tensors[i];
    progress.tensor = t.name;
    progress.tensor_index = int(i);
    const TensorRef src = t.source.empty() ? TensorRef{} : ck->find(t.source);
    const uint64_t cols = t.ne[0];
    const uint64_t src_row_bytes = src.tensor ? cols * dtype_size(src.tensor->dtype) : 0;
    const uint64_t out_row_bytes = row_bytes(type_info(types[i]), cols);
    uint64_t rows_done = 0;
    bool go_on = true;
    auto fill = [&](uint64_t r0, uint64_t n, float* dst) -> Result<void> {
      for (uint64_t k = 0; k < n; ++k) {
        float* row = dst + k * cols;
        if (!src.tensor) {
          std::copy_n(t.data.data() + (r0 + k) * cols, cols, row);
          continue;
        }
        to_f32(src.tensor->dtype, src.tensor->data + src_row(t, r0 + k) * src_row_bytes, row, cols);
        if (t.transform == Transform::plus_one)
          for (uint64_t c = 0; c < cols; ++c) row[c] += 1.0f;
      }
      return {};
    };
    auto sink = [&](std::span<const uint8_t> bytes) -> Result<void> {
      NURL_TRY(file->write(bytes));
      const uint64_t rows = bytes.size() / out_row_bytes;
      // The consumed source rows leave the resident set (rope_permute rows: once the tensor is done).
      if (src.tensor && t.transform != Transform::rope_permute)
        src.file->release(*src.tensor, rows_done * src_row_bytes, rows * src_row_bytes);
      rows_done += rows;
      if (src.tensor && rows_done == t.n_rows()) src.file->release(*src.tensor, 0, src.tensor->n_bytes());
      progress.bytes_done += bytes.size();
      go_on = report();
      return go_on ? Result<void>() : Error(Code::cancelled, "cancelled");
    };
    auto r = enc.encode(types[i], cols, t.n_rows(), fill, sink);
    if (!go_on) return cancelled();
    if (!r.ok()) return fail(r.error().context("tensor " + t.name));
  }
  progress.stage = "finishing";
  progress.tensor.clear();
  if (!report()) return cancelled();
  if (auto r = file->finish(); !r.ok()) return fail(r.error());
  return {};
}

}  // namespace nurl::convert
