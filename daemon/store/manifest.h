// Manifest: the small JSON document stored at manifests/<host>/<ns>/<model>/<tag> that names one
// blob. It is the only thing that makes a model visible, so it is always written last.
//   {"schema":1,"name":"me/tiny:latest","tag":"latest","source":"https://…","digest":"sha256:…",
//    "size":123,"format":"gguf","added_at":"2026-11-29T11:00:00Z",
//    "details":{"family":"llama","parameter_size":"260.1K","quantization_level":"F32"},
//    "system":"…","template":"…","parameters":{"temperature":0.7,"stop":["…"]},
//    "validators":{"url":"…","etag":"\"abc\"","last_modified":"…","size":123,
//                  "linked_etag":"…","repo_commit":"…"}}
// "validators" are what the source said about the bytes when they were fetched (HTTP ETag and
// Last-Modified, Hugging Face's X-Linked-Etag / X-Repo-Commit): a re-pull asks with them and
// skips the transfer when nothing changed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/model-name.h"
#include "core/error.h"

namespace nurl {

// What /api/tags reports under "details"; read from the GGUF header when the model is added.
struct ModelDetails {
  std::string format = "gguf";
  std::string family;              // general.architecture ("llama", "qwen3", ...)
  std::string parameter_size;      // "260.1K", "1.24B"
  std::string quantization_level;  // "Q4_K_M", "F16", ...
};

struct Manifest {
  ModelName name;
  std::string source;    // where the bytes came from (URL, hf.co ref, local path, "upload")
  std::string digest;    // "sha256:<hex>" of the blob
  uint64_t size = 0;     // blob size in bytes
  std::string added_at;  // RFC 3339 UTC, also reported as modified_at
  ModelDetails details;
  std::string system;    // Modelfile SYSTEM (empty: none)
  std::string template_text;                             // Modelfile TEMPLATE (empty: the GGUF's)
  nlohmann::json parameters = nlohmann::json::object();  // Modelfile PARAMETER lines
  nlohmann::json validators = nlohmann::json::object();  // the source's validators (pulls)
};

nlohmann::json manifest_to_json(const Manifest& m);
// Validates every field (name grammar, digest shape); `where` names the file for errors.
Result<Manifest> manifest_from_json(const nlohmann::json& j, const std::string& where);

// Current time as RFC 3339 UTC ("2026-11-29T11:00:00Z").
std::string now_rfc3339();
// The time of such a string (seconds precision); nullopt when it does not parse.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& s);

}  // namespace nurl
