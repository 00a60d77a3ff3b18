// The pull kind: resolves the source, downloads into blobs/<key>.part with an incremental
// SHA-256, resumes with Range, verifies, moves the blob to its content address and writes the
// manifest last. Errors end the job with a message that names the cause and a fix.
//
// Re-pulls: the manifest remembers the source's validators (ETag, Last-Modified, Hugging Face's
// X-Linked-Etag / X-Repo-Commit, the size). When the model is in the store from the same source,
// the pull first asks whether anything changed (HF: the listing's LFS digest or a HEAD of the
// resolve URL; other URLs: a conditional GET with If-None-Match / If-Modified-Since) and ends
// "up to date" without a transfer. A changed source is downloaded again; the old blob goes once
// no manifest references it.
//
// Sources: hf.co/ORG/REPO/FILE.gguf, hf.co/ORG/REPO[:QUANT] (file chosen from the repo's file
// list), http(s):// URLs, and local paths (./x.gguf, /abs/x.gguf).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "api/model-name.h"
#include "jobs/job-kind.h"

namespace nurl {

struct PullConfig {
  std::string hf_endpoint = "https://huggingface.co";  // HF_ENDPOINT (mirrors, tests)
  std::string hf_token;                                // HF_TOKEN: sent only to hf_endpoint
  int max_attempts = 6;           // failed attempts in a row (without new bytes) before giving up
  std::chrono::milliseconds backoff{500};  // first retry delay; doubles, capped at 30 s
  long connect_timeout_s = 20;
  long low_speed_time_s = 60;     // a transfer below 1 byte/s this long is retried
  long max_redirects = 10;
  std::function<void(uint64_t)> on_bytes;  // told every downloaded chunk's size (metrics); may be empty

  static PullConfig from_env(const std::function<const char*(const char*)>& getenv);
};

struct PullRequest {
  std::string source;  // model ref, URL or local path
  std::string name;    // model name to create; empty: derived from the source
};

// What a source means, decided without network access.
struct PullPlan {
  enum class Kind { url, hf, local };
  Kind kind = Kind::url;
  std::string key;              // normalised source: pulls with equal keys share one job
  std::string url;              // url: the file; hf: set once the file is known
  std::filesystem::path local;  // local
  ModelName name;               // the model it creates
  ModelName hf;                 // hf: the reference (tag = file or quant)
};
Result<PullPlan> plan_pull(const PullRequest& req);

std::unique_ptr<JobKind> make_pull_kind(PullConfig cfg);

// Chooses the GGUF file of an HF repository listing (the /api/models/ORG/REPO/tree/main JSON)
// for a quant tag ("Q4_K_M"; "latest" prefers Q4_K_M, then Q4_0, then the first GGUF).
struct HfFile {
  std::string path;
  uint64_t size = 0;
  std::string digest;  // "sha256:<hex>" from the LFS pointer, empty when unknown
};
Result<HfFile> choose_hf_file(const nlohmann::json& listing, const std::string& quant, const std::string& repo);

}  // namespace nurl
