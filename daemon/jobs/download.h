// One resumable download into a .part file for the pull kind: an incremental SHA-256, Range
// resumes (the existing part is re-hashed first), retries with back-off, stall detection, and a
// conditional first request for re-pulls (If-None-Match / If-Modified-Since from the validators
// the store kept), which ends "unchanged" without a body when the source says nothing changed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/log.h"
#include "jobs/job.h"

namespace nurl {

struct PullConfig;

struct DownloadSpec {
  std::string url;
  std::vector<std::string> headers;  // "Name: value" (Authorization for the HF endpoint)
  std::filesystem::path part;        // the .part file (kept across attempts and restarts)
  uint64_t expected_size = 0;        // from a repository listing; 0 when unknown
  std::string label_digest;          // names the progress line ("pulling <12 hex>")
  // The validators of the copy already in the store (a re-pull), or an empty object.
  nlohmann::json validators = nlohmann::json::object();
  std::string auth_hint;             // appended to 401/403 messages
};

struct Downloaded {
  bool unchanged = false;  // 304, or the same strong ETag: nothing was downloaded or kept
  std::string digest;      // "sha256:<hex>" of the complete part
  uint64_t size = 0;
  // What the final response said about the bytes: url, size, etag, last_modified, and the
  // Hugging Face linked_etag / repo_commit when the hub sent them.
  nlohmann::json validators = nlohmann::json::object();
};

// Runs the download to its end. Errors: Code::cancelled when the job was stopped (the part is
// kept for a resume; the caller removes it on a user cancel); otherwise a message naming the
// cause. A body that is not GGUF is refused after its first bytes and its part deleted.
Result<Downloaded> download(const DownloadSpec& spec, const PullConfig& cfg, Job& job, Logger& log);

}  // namespace nurl
