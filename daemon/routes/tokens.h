// Token management, served only on the control socket (Access::control):
//   POST   /control/tokens        {"name": N, "scope": "chat"|"admin"} → the secret, shown once
//   GET    /control/tokens        names, scopes, creation times (never secrets or hashes)
//   DELETE /control/tokens/:name  revoke; the next request with it gets 401
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {
void add_token_routes(http::Router& r, RouteContext& ctx);
}
