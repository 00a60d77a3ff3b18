// Daemon: owns everything nurllamad runs — configuration, logger, io_context, router, server,
// scheduler — and the process lifecycle: signals (SIGTERM/SIGINT stop cleanly with exit 0,
// SIGHUP reloads the config), sd_notify READY/STOPPING under systemd.
#pragma once

#include "config.h"
#include "core/log.h"

namespace nurl {

// Runs the daemon until it is told to stop; returns the process exit code.
int run_daemon(ConfigSources sources, Logger& log);

}  // namespace nurl
