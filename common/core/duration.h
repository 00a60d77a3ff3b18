// Durations as ollama accepts them: a number (seconds), or a Go-style string ("5m", "1h30m",
// "300ms", "-1s"). A negative duration means "forever" to keep_alive; that is the caller's call.
#pragma once

#include <chrono>
#include <string_view>

#include "core/error.h"

namespace nurl {

using Nanos = std::chrono::nanoseconds;

Result<Nanos> parse_duration(std::string_view s);
Nanos seconds_to_duration(double seconds);

}  // namespace nurl
