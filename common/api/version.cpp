#include "api/version.h"

namespace nurl {
const char* version_string() { return "0.1.0"; }
}
