// Model names, shared by daemon and client. Two spellings are accepted:
//   ollama:        [host/][namespace/]model[:tag]   defaults registry.ollama.ai / library / latest
//   Hugging Face:  hf.co/ORG/REPO/FILE.gguf  and  hf.co/ORG/REPO[:QUANT]   (huggingface.co → hf.co)
// Invariant: every part of a parsed name is a single path segment made of [A-Za-z0-9_.-], starting
// with a letter, digit or '_', never containing "..", so manifest_path() can never leave the store.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace nurl {

inline constexpr std::string_view kDefaultHost = "registry.ollama.ai";
inline constexpr std::string_view kDefaultNamespace = "library";
inline constexpr std::string_view kDefaultTag = "latest";
inline constexpr std::string_view kHfHost = "hf.co";

struct ModelName {
  std::string host = std::string(kDefaultHost);
  std::string ns = std::string(kDefaultNamespace);  // HF: the organisation
  std::string model;                                // HF: the repository
  std::string tag = std::string(kDefaultTag);       // HF: a quant ("Q4_K_M") or a file ("x.gguf")

  bool is_hf() const { return host == kHfHost; }
  // hf.co/ORG/REPO/FILE.gguf: the tag names one file of the repository.
  bool is_hf_file() const;

  // The short form users see and /api/tags reports: "llama3:latest", "me/tiny:q4",
  // "example.com/me/tiny:q4", "hf.co/org/repo:Q4_K_M", "hf.co/org/repo/file.gguf".
  std::string display() const;
  // Relative path of the manifest under manifests/: "host/ns/model/tag" (4 safe segments).
  std::string manifest_path() const;

  friend bool operator==(const ModelName&, const ModelName&) = default;
};

// Parses and validates a name; the error says which part is wrong and why.
Result<ModelName> parse_model_name(std::string_view s);

// True when `s` is a valid single name segment (used for tags and file names too).
bool valid_name_segment(std::string_view s, size_t max_len = 128);

// Turns an arbitrary file stem ("Llama-3.2 1B (Q4)") into a valid model segment ("llama-3.2-1b-q4"),
// for models created from URLs or local files without an explicit name. Never empty.
std::string sanitize_model_segment(std::string_view s);

}  // namespace nurl
