#include "routes/routes.h"

#include "routes/basic.h"
#include "routes/control.h"
#include "routes/embed.h"
#include "routes/generate.h"
#include "routes/inspect.h"
#include "routes/jobs.h"
#include "routes/models.h"
#include "routes/show.h"

namespace nurl {

void add_all_routes(http::Router& r, RouteContext& ctx) {
  add_basic_routes(r, ctx);
  add_control_routes(r, ctx);
  add_generate_routes(r, ctx);
  add_embed_routes(r, ctx);
  add_show_routes(r, ctx);
  add_inspect_routes(r, ctx);
  add_models_routes(r, ctx);
  add_jobs_routes(r, ctx);
}

}  // namespace nurl
