// The shared body of the kinds that write a GGUF (convert, quantize): where the output goes, its
// progress lines, the resume point across restarts, cancel, and the import into the store.
//
// The producing step (the engine's convert_checkpoint / quantize_model) writes `out` through
// `out + ".partial"` and renames it when complete; after every tensor it reports a resume point,
// which is saved with the job. After a restart the step is called again with that point and
// continues where it was if the partial file is intact (the engine checks its prefix hash), else
// from the beginning. The output is verified (GGUF header and metadata) and hashed before it is
// imported as a blob and its manifest written, so a half-written model is never visible.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/job-kind.h"
#include "store/store.h"

namespace nurl {

// Where a finished GGUF goes: a model in the store, or a file.
struct OutputTarget {
  std::string model;           // a model name (import into the store), or empty
  std::filesystem::path file;  // an absolute file path (written in place), or empty
  CreateOptions create;        // the manifest's settings when importing

  static Result<OutputTarget> from_request(const nlohmann::json& request);
  void to_request(nlohmann::json& request) const;
  std::string describe() const { return model.empty() ? file.string() : model; }
};

struct ProducerProgress {
  std::string stage;  // "reading checkpoint", "tokenizer", "tensors", "finishing"
  std::string tensor;
  uint64_t done = 0, total = 0;  // output tensor bytes
};

struct ProducerCall {
  std::filesystem::path out;
  nlohmann::json resume;  // the last saved resume point, or null: start from the beginning
  int threads = 1;
  std::function<bool(const ProducerProgress&)> on_progress;     // false: stop
  std::function<void(const nlohmann::json&)> on_checkpoint;     // a new resume point (persisted)
};
using Producer = std::function<Result<void>(const ProducerCall&)>;

// Runs the job: state running, `title` as the progress line ("converting model"), the producer
// (resumed when the job saved a point), then verify, import or place, and success. Ends the job
// (or leaves it unfinished on a daemon shutdown, keeping the partial file to resume).
void run_gguf_job(JobContext& ctx, const std::string& title, const OutputTarget& target, const Producer& produce);
// Removes the partial output of a job that will not run again (cancelled while queued).
void discard_gguf_output(JobContext& ctx, const OutputTarget& target);

// The entry of `types` equal to `requested` ignoring ASCII case, or an error that lists them all:
// `unknown <what> "x" (one of a, b, ...)`.
Result<std::string> match_type(const std::string& requested, const std::vector<std::string>& types,
                               const std::string& what);

// What the kinds that write a GGUF share: they are heavy, a plan ends the same way, and a job
// that will not run again leaves no partial output behind.
class GgufJobKind : public JobKind {
 public:
  bool heavy() const override { return true; }
  void discard(JobContext& ctx) const override;

 protected:
  // Completes the plan `r` of the request: "type" (already matched), the output target, "threads";
  // the de-duplication key is "<key_source> -> <type> -> <target>".
  static Result<JobPlan> finish_plan(const nlohmann::json& request, nlohmann::json r, const std::string& key_source,
                                     const std::string& type);
};

}  // namespace nurl
