// The parts of nurllamad(8) that are not in the option definitions: configuration keys (from
// config_keys()), environment, signals, files, the systemd integration.
#pragma once

#include "cli/cli-docs.h"

namespace nurl {

cli::Manual daemon_manual();

}  // namespace nurl
