#include "routes/routes.h"

#include "routes/anthropic.h"
#include "routes/basic.h"
#include "routes/control.h"
#include "routes/embed.h"
#include "routes/generate.h"
#include "routes/inspect.h"
#include "routes/metrics.h"
#include "routes/jobs.h"
#include "routes/models.h"
#include "routes/openai.h"
#include "routes/show.h"
#include "routes/tokens.h"
#include "routes/web.h"

namespace nurl {

void add_all_routes(http::Router& r, RouteContext& ctx) {
  add_basic_routes(r, ctx);
  add_control_routes(r, ctx);
  add_generate_routes(r, ctx);
  add_embed_routes(r, ctx);
  add_show_routes(r, ctx);
  add_inspect_routes(r, ctx);
  add_models_routes(r, ctx);
  add_openai_routes(r, ctx);
  add_anthropic_routes(r, ctx);
  add_metrics_routes(r, ctx);
  add_token_routes(r, ctx);
  add_web_routes(r, ctx);
  add_jobs_routes(r, ctx);
}

}  // namespace nurl
