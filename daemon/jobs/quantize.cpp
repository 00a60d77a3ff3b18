// The quantize kind (see quantize.h).
#include "jobs/quantize.h"

#include <algorithm>

#include "api/json-fields.h"
#include "engine/quant/quantize-model.h"
#include "jobs/engine-progress.h"
#include "jobs/gguf-output.h"
#include "store/sha256.h"
#include "store/store.h"

namespace nurl {

namespace fs = std::filesystem;

namespace {

class QuantizeKind : public GgufJobKind {
 public:
  std::string name() const override { return "quantize"; }

  Result<JobPlan> plan(const nlohmann::json& request) const override {
    nlohmann::json r = nlohmann::json::object();
    std::string source = jf::str(request, "source"), blob = jf::str(request, "blob");
    std::string key_source;
    if (!blob.empty()) {
      if (!source.empty()) return Error(Code::invalid_argument, "quantize takes \"source\" or \"blob\", not both");
      NURL_TRY(digest_hex(blob));
      r["blob"] = key_source = blob;
    } else {
      fs::path p(source);
      if (source.empty() || !p.is_absolute())
        return Error(Code::invalid_argument, "quantize needs \"source\" (an absolute .gguf path) or \"blob\"");
      r["source"] = key_source = p.lexically_normal().string();
    }
    NURL_ASSIGN(std::string type, match_type(jf::str(request, "type"), quant::quantize_types(), "quantisation type"));
    return finish_plan(request, std::move(r), key_source, type);
  }

  void run(JobContext& ctx) const override {
    auto target = OutputTarget::from_request(ctx.request);
    if (!target.ok()) return fail_job(ctx, target.error().msg);
    fs::path in = jf::str(ctx.request, "source");
    BlobPin pin;
    if (std::string blob = jf::str(ctx.request, "blob"); !blob.empty()) {
      pin = ctx.store.pin(blob);  // the input outlives a `rm` of its model while the job runs
      if (!ctx.store.has_blob(blob))
        return fail_job(ctx, "the model to quantise is gone from the store (blob " + blob + ")");
      in = ctx.store.blob_path(blob);
      target->create.source = blob;
    } else {
      target->create.source = in.string();
    }
    auto details = read_model_details(in);
    std::string from = details.ok() && !details->quantization_level.empty() ? details->quantization_level : "the";
    const std::string type = jf::str(ctx.request, "type");
    run_gguf_job(ctx, "quantizing " + from + " model to " + type, *target, [&](const ProducerCall& call) -> Result<void> {
      quant::QuantizeOptions o;
      o.type = type;
      apply_call(o, call);
      return quant::quantize_model(in, call.out, o);
    });
  }

};

}  // namespace

std::unique_ptr<JobKind> make_quantize_kind() { return std::make_unique<QuantizeKind>(); }

}  // namespace nurl
