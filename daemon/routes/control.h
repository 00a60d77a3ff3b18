// Control routes, served only on the Unix socket to authorised peers:
//   POST /control/shutdown  stop serving, end streams, exit 0
//   POST /control/reload    re-read the config file and environment (as SIGHUP)
//   POST /control/unload    {"model": NAME}: unload once idle
// (Job listing and cancel belong to the jobs component's routes.)
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_control_routes(http::Router& r, RouteContext& ctx);
}
