// The architecture table: adding one is a new arch/<name>.cpp plus one row here.
#include "engine/arch/arch.h"

namespace nurl {
namespace {

constexpr ArchEntry kArchs[] = {
    {"llama", load_llama},
    {"qwen2", load_qwen2},
    {"qwen3", load_qwen3},
    {"gemma3", load_gemma3},
    {"phi3", load_phi3},
};

}  // namespace

std::span<const ArchEntry> arch_registry() { return kArchs; }

const ArchEntry* find_arch(std::string_view name) {
  for (const ArchEntry& a : kArchs)
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace nurl
