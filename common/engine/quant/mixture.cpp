// llama-quantize's per-tensor type choices, as observed on synthetic models (see mixture.h).
#include "engine/quant/mixture.h"

#include <algorithm>
#include <cctype>

namespace nurl::quant {

namespace {

using G = GgmlType;

constexpr FileType kFileTypes[] = {
    {"Q4_0", 2, G::Q4_0},     {"Q4_1", 3, G::Q4_1},     {"Q5_0", 8, G::Q5_0},     {"Q5_1", 9, G::Q5_1},
    {"Q2_K", 10, G::Q2_K},    {"Q3_K_S", 11, G::Q3_K},  {"Q3_K_M", 12, G::Q3_K},  {"Q3_K_L", 13, G::Q3_K},
    {"Q4_K_S", 14, G::Q4_K},  {"Q4_K_M", 15, G::Q4_K},  {"Q5_K_S", 16, G::Q5_K},  {"Q5_K_M", 17, G::Q5_K},
    {"Q6_K", 18, G::Q6_K},    {"Q8_0", 7, G::Q8_0},     {"F16", 1, G::F16},       {"BF16", 32, G::BF16},
    {"F32", 0, G::F32},
};

constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
    {"Q3_K", "Q3_K_M"}, {"Q4_K", "Q4_K_M"}, {"Q5_K", "Q5_K_M"}};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
         });
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool is_quantized(G t) { return t != G::F32 && t != G::F16 && t != G::BF16; }

// The layers that get more bits in the _M mixtures: the first and last eighth, and every third
// layer in between.
bool use_more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

}  // namespace

std::span<const FileType> file_types() { return kFileTypes; }

const FileType* find_file_type(std::string_view name) {
  for (const auto& [alias, target] : kAliases)
    if (iequal(name, alias)) name = target;
  for (const FileType& ft : kFileTypes)
    if (iequal(name, ft.name)) return &ft;
  return nullptr;
}

bool is_quantizable(std::string_view name, uint32_t n_dims) {
  return n_dims >= 2 && name.size() >= 6 && name.substr(name.size() - 6) == "weight" && !contains(name, "_norm.weight");
}

GgmlType fallback_type(GgmlType t, uint64_t ne0) {
  if (ne0 % type_info(t).block_elems == 0) return t;
  switch (t) {
    case G::Q2_K: case G::Q3_K: t = G::Q4_0; break;
    case G::Q4_K: t = G::Q5_0; break;
    case G::Q5_K: t = G::Q5_1; break;
    case G::Q6_K: t = G::Q8_0; break;
    default: break;
  }
  return ne0 % type_info(t).block_elems == 0 ? t : G::F16;
}

TypeChooser::TypeChooser(const FileType& ft, bool pure, const ModelFacts& facts)
    : ft_(ft), pure_(pure), facts_(facts) {}

std::optional<GgmlType> TypeChooser::next(std::string_view name, std::span<const uint64_t> ne) {
  if (!is_quantizable(name, static_cast<uint32_t>(ne.size()))) return std::nullopt;
  if (ft_.base == G::F32 || !is_quantized(ft_.base)) return ft_.base;
  const GgmlType t = pure_ ? ft_.base : mixture_type(name, ne[0]);
  return fallback_type(t, ne[0]);
}

GgmlType TypeChooser::mixture_type(std::string_view name, uint64_t ne0) {
  const std::string_view ft = ft_.name;
  const bool is_output = name == "output.weight" || (!facts_.has_output && name == "token_embd.weight");
  if (is_output) {
    if (ne0 % 256 != 0) return G::Q8_0;
    return ft_.base == G::Q8_0 ? G::Q8_0 : G::Q6_K;
  }
  if (contains(name, "attn_v.weight") || contains(name, "attn_qkv.weight")) {
    const int i = i_attn_v_++, n = facts_.n_attn_v;
    const int n_gqa = facts_.n_head_kv > 0 ? facts_.n_head / facts_.n_head_kv : 1;
    if (ft == "Q2_K") return n_gqa >= 4 ? G::Q4_K : G::Q3_K;
    if (ft == "Q3_K_M") return i < 2 ? G::Q5_K : G::Q4_K;
    if (ft == "Q3_K_L") return G::Q5_K;
    if ((ft == "Q4_K_M" || ft == "Q5_K_M") && use_more_bits(i, n)) return G::Q6_K;
    if (ft == "Q4_K_S" && i < 4) return G::Q5_K;
    return ft_.base;
  }
  if (contains(name, "ffn_down")) {
    const int i = i_ffn_down_++, n = facts_.n_ffn_down;
    if (ft == "Q2_K") return G::Q3_K;
    if (ft == "Q3_K_M") return i < n / 16 ? G::Q5_K : G::Q4_K;
    if (ft == "Q3_K_L") return G::Q5_K;
    if ((ft == "Q4_K_M" || ft == "Q5_K_M") && use_more_bits(i, n)) return G::Q6_K;
    if (ft == "Q4_K_S" && i < n / 8) return G::Q5_K;
    return ft_.base;
  }
  if (contains(name, "attn_output.weight")) {
    if (ft == "Q2_K") return G::Q3_K;
    if (ft == "Q3_K_M") return G::Q4_K;
    if (ft == "Q3_K_L") return G::Q5_K;
  }
  return ft_.base;
}

}  // namespace nurl::quant
