// The project version, as reported by /api/version and `nurllama version`.
#pragma once

namespace nurl {
const char* version_string();
}
