// Range checks for generation options (see options.h).
#include "engine/runtime/options.h"

#include <cmath>

namespace nurl {

namespace {

Error bad(const std::string& what) { return Error(Code::invalid_argument, "option " + what); }

}  // namespace

Result<void> Options::validate() const {
  if (num_ctx < 1) return bad("num_ctx must be >= 1, got " + std::to_string(num_ctx));
  if (num_predict < -2) return bad("num_predict must be >= -2, got " + std::to_string(num_predict));
  if (num_keep < -1) return bad("num_keep must be >= -1, got " + std::to_string(num_keep));
  if (num_batch < 1) return bad("num_batch must be >= 1, got " + std::to_string(num_batch));
  if (!std::isfinite(temperature)) return bad("temperature must be a finite number");
  if (!std::isfinite(top_p) || top_p < 0) return bad("top_p must be >= 0");
  if (!std::isfinite(min_p) || min_p > 1) return bad("min_p must be <= 1");
  if (!std::isfinite(typical_p) || typical_p < 0) return bad("typical_p must be >= 0");
  if (repeat_last_n < -1) return bad("repeat_last_n must be >= -1, got " + std::to_string(repeat_last_n));
  if (!std::isfinite(repeat_penalty) || repeat_penalty < 0) return bad("repeat_penalty must be >= 0");
  if (!std::isfinite(presence_penalty)) return bad("presence_penalty must be a finite number");
  if (!std::isfinite(frequency_penalty)) return bad("frequency_penalty must be a finite number");
  if (top_logprobs < 0 || top_logprobs > 20)
    return bad("top_logprobs must be in 0..20, got " + std::to_string(top_logprobs));
  for (const auto& s : stop)
    if (s.empty()) return bad("stop: empty stop sequence");
  return ok();
}

Options greedy_options() {
  Options o;
  o.temperature = 0.0f;
  o.top_k = 0;
  o.top_p = 1.0f;
  o.repeat_penalty = 1.0f;
  o.repeat_last_n = 0;
  return o;
}

}  // namespace nurl
