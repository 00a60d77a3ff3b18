// Conversion from JSON (the request context: messages, tools, extra variables) to jinja::Value.
// Objects keep their key order, which is why the API takes nlohmann::ordered_json: templates
// print tool schemas with tojson and Hugging Face keeps the caller's order.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "core/error.h"
#include "engine/chat/jinja-interp.h"

namespace nurl::jinja {

// null -> None, numbers -> int (or float beyond int64) / float, arrays -> list, objects -> dict.
Result<Value> from_json(Interp& in, const nlohmann::ordered_json& j);

}  // namespace nurl::jinja
