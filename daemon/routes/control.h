// Control routes, served only on the Unix socket to authorised peers: shutdown, config reload,
// unload. (Jobs are listed by the jobs component.)
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_control_routes(http::Router& r, RouteContext& ctx);
}
