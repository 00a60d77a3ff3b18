#include "engine/quant/types.h"

#include <array>
#include <cctype>

namespace nurl {

namespace {

constexpr std::array kTypes = {
    TypeInfo{GgmlType::F32, "f32", 1, 4},
    TypeInfo{GgmlType::F16, "f16", 1, 2},
    TypeInfo{GgmlType::Q4_0, "q4_0", 32, 18},
    TypeInfo{GgmlType::Q4_1, "q4_1", 32, 20},
    TypeInfo{GgmlType::Q5_0, "q5_0", 32, 22},
    TypeInfo{GgmlType::Q5_1, "q5_1", 32, 24},
    TypeInfo{GgmlType::Q8_0, "q8_0", 32, 34},
    TypeInfo{GgmlType::Q8_1, "q8_1", 32, 36},
    TypeInfo{GgmlType::Q2_K, "q2_K", 256, 84},
    TypeInfo{GgmlType::Q3_K, "q3_K", 256, 110},
    TypeInfo{GgmlType::Q4_K, "q4_K", 256, 144},
    TypeInfo{GgmlType::Q5_K, "q5_K", 256, 176},
    TypeInfo{GgmlType::Q6_K, "q6_K", 256, 210},
    TypeInfo{GgmlType::Q8_K, "q8_K", 256, 292},
    TypeInfo{GgmlType::IQ2_XXS, "iq2_xxs", 256, 66},
    TypeInfo{GgmlType::IQ2_XS, "iq2_xs", 256, 74},
    TypeInfo{GgmlType::IQ3_XXS, "iq3_xxs", 256, 98},
    TypeInfo{GgmlType::IQ1_S, "iq1_s", 256, 50},
    TypeInfo{GgmlType::IQ4_NL, "iq4_nl", 32, 18},
    TypeInfo{GgmlType::IQ3_S, "iq3_s", 256, 110},
    TypeInfo{GgmlType::IQ2_S, "iq2_s", 256, 82},
    TypeInfo{GgmlType::IQ4_XS, "iq4_xs", 256, 136},
    TypeInfo{GgmlType::I8, "i8", 1, 1},
    TypeInfo{GgmlType::I16, "i16", 1, 2},
    TypeInfo{GgmlType::I32, "i32", 1, 4},
    TypeInfo{GgmlType::I64, "i64", 1, 8},
    TypeInfo{GgmlType::F64, "f64", 1, 8},
    TypeInfo{GgmlType::IQ1_M, "iq1_m", 256, 56},
    TypeInfo{GgmlType::BF16, "bf16", 1, 2},
    TypeInfo{GgmlType::TQ1_0, "tq1_0", 256, 54},
    TypeInfo{GgmlType::TQ2_0, "tq2_0", 256, 66},
    TypeInfo{GgmlType::MXFP4, "mxfp4", 32, 17},
};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

}  // namespace

std::optional<TypeInfo> type_info(uint32_t id) {
  for (const auto& t : kTypes)
    if (static_cast<uint32_t>(t.type) == id) return t;
  return std::nullopt;
}

const TypeInfo& type_info(GgmlType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t;
  return kTypes[0];  // unreachable for valid enum values
}

std::string_view type_name(GgmlType t) { return type_info(t).name; }

std::optional<GgmlType> type_from_name(std::string_view name) {
  for (const auto& t : kTypes)
    if (iequals(t.name, name)) return t.type;
  return std::nullopt;
}

}  // namespace nurl
