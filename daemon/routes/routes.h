// The route table: every endpoint family adds its routes here. To add a family, write
// routes/<family>.{h,cpp} with `void add_<family>_routes(http::Router&, RouteContext&)` and call
// it from add_all_routes(). See http/router.h for patterns and access control.
#pragma once

#include "http/router.h"
#include "routes/context.h"

namespace nurl {

void add_all_routes(http::Router& r, RouteContext& ctx);

}  // namespace nurl
