// Fill-in-the-middle (`suffix` on /api/generate and /v1/completions): the prompt laid out as
// prefix-suffix-middle with the vocabulary's own FIM tokens, so the model writes what goes
// between `prompt` and `suffix`. A model whose vocabulary has no FIM tokens cannot do it: a 400
// that says so, never the suffix silently dropped.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "scheduler/job.h"
#include "scheduler/model.h"

namespace nurl {

// The three token texts of one FIM family, in prompt order (before the prefix, before the
// suffix, before the middle).
struct FimSpelling {
  std::string_view prefix, suffix, middle;
};

// The FIM families we know (Qwen/CodeGemma, StarCoder/Granite, DeepSeek, Code Llama).
std::span<const FimSpelling> fim_spellings();

// The first family whose three texts `is_token` accepts, or nullptr.
const FimSpelling* find_fim(const std::function<bool(std::string_view)>& is_token);

// BOS (when the model adds one), FIM-prefix, prompt, FIM-suffix, suffix, FIM-middle.
// invalid_argument when the model's vocabulary has no FIM tokens.
Result<std::vector<int32_t>> fim_prompt(const sched::LoadedModel& m, const std::string& prompt, const std::string& suffix);

// The prepare of a fill-in-the-middle request (rendered = prompt + suffix, for logs and echo).
std::function<Result<sched::PreparedPrompt>(const sched::LoadedModel&)> fim_prepare(std::string prompt,
                                                                                      std::string suffix);

}  // namespace nurl
