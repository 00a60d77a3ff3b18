// The pull job body: resolves the source, downloads into blobs/<key>.part with an incremental
// SHA-256, resumes with Range, verifies, moves the blob to its content address and writes the
// manifest last. Errors end the job with a message that names the cause and a fix.
#pragma once

#include <functional>

#include "jobs/job-manager.h"

namespace nurl {

struct PullContext {
  Store& store;
  const PullConfig& cfg;
  Job& job;
  Logger& log;
  std::function<void()> persist;  // saves the job's state (called on state changes)
  std::function<void(uint64_t)> on_bytes = {};  // bytes downloaded (metrics); may be empty
};

// Runs the pull to its end. Returns without finishing the job when it was stopped for a
// shutdown (so it resumes later); otherwise the job ends succeeded, failed or cancelled.
void run_pull(PullContext& ctx, const PullPlan& plan);

// Chooses the GGUF file of an HF repository listing (the /api/models/ORG/REPO/tree/main JSON)
// for a quant tag ("Q4_K_M"; "latest" prefers Q4_K_M, then Q4_0, then the first GGUF).
struct HfFile {
  std::string path;
  uint64_t size = 0;
  std::string digest;  // "sha256:<hex>" from the LFS pointer, empty when unknown
};
Result<HfFile> choose_hf_file(const nlohmann::json& listing, const std::string& quant, const std::string& repo);

}  // namespace nurl
