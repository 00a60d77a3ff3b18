// The engine's progress and resume types (common/engine/convert/convert.h) as the job queue
// speaks them: ProducerProgress lines and resume points saved as JSON with the job.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "api/json-fields.h"
#include "engine/convert/convert.h"
#include "jobs/gguf-output.h"

namespace nurl {

inline ProducerProgress producer_progress(const convert::Progress& p) {
  return {p.stage, p.tensor, p.bytes_done, p.bytes_total};
}

inline nlohmann::json resume_json(const convert::ResumePoint& r) {
  return {{"tensors_done", r.tensors_done}, {"file_offset", r.file_offset}, {"prefix_sha256", r.prefix_sha256}};
}

inline std::optional<convert::ResumePoint> resume_point(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("tensors_done") || !j.contains("file_offset")) return std::nullopt;
  convert::ResumePoint r;
  r.tensors_done = jf::int_in(j, "tensors_done", 0, 1 << 30, 0);
  r.file_offset = jf::u64(j, "file_offset");
  r.prefix_sha256 = jf::str(j, "prefix_sha256");
  return r;
}

// Fills an engine options struct (ConvertOptions or QuantizeOptions) from a producer call.
template <class Options>
void apply_call(Options& o, const ProducerCall& call) {
  o.threads = call.threads;
  o.resume = resume_point(call.resume);
  o.keep_partial_on_cancel = true;  // a shutdown resumes from it; a user cancel removes it (gguf-output.cpp)
  o.on_progress = [&call](const convert::Progress& p) { return call.on_progress(producer_progress(p)); };
  o.on_checkpoint = [&call](const convert::ResumePoint& r) { call.on_checkpoint(resume_json(r)); };
}

}  // namespace nurl
