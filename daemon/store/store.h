// Store: the on-disk model store. Content-addressed blobs plus one manifest per model name.
//
//   <models>/blobs/sha256-<hex>              model files, named by the SHA-256 of their bytes
//   <models>/blobs/<id>.part                 downloads in progress (owned by pull jobs)
//   <models>/manifests/<host>/<ns>/<model>/<tag>   small JSON (manifest.h), written last
//   <home>/jobs/<id>.json                    job state (daemon/jobs)
//
// Where: <home> = $NURLLAMA_HOME, else $STATE_DIRECTORY (systemd StateDirectory=nurllama, i.e.
// /var/lib/nurllama for the system service), else ~/.nurllama. <models> = $NURLLAMA_MODELS, else
// $OLLAMA_MODELS (alias), else <home>/models.
//
// Invariants: a manifest names only a complete blob (blob renamed into place and fsynced first);
// every write is temp + fsync + rename, so a crash leaves the old state or the new one, plus
// stray ".tmp-*" files that open() removes. A blob is deleted only when no manifest references it
// and no writer has pinned it. Thread-safe: one Store is shared by the daemon's routes and jobs.
//
// Names are case-insensitive: every lookup (resolve, read, remove, copy, verify) finds the
// manifest whose host/namespace/model/tag match ignoring ASCII case, and writing a name that
// differs only in case replaces that manifest.
//
// For the serving side: resolve(name) is the only call needed before loading a model. It checks
// the blob's size and GGUF header against the manifest and refuses (Code::corrupt) otherwise, so a
// truncated or overwritten blob is never handed to the engine. list() feeds /api/tags.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/model-name.h"
#include "core/error.h"
#include "store/manifest.h"

namespace nurl {

struct StoreLayout {
  std::filesystem::path home;    // job state and other daemon state
  std::filesystem::path models;  // blobs/ and manifests/

  std::filesystem::path blobs() const { return models / "blobs"; }
  std::filesystem::path manifests() const { return models / "manifests"; }
  std::filesystem::path jobs() const { return home / "jobs"; }

  // Reads NURLLAMA_HOME, STATE_DIRECTORY, HOME, NURLLAMA_MODELS, OLLAMA_MODELS through `getenv`
  // (pass std::getenv, or a fake in tests).
  static Result<StoreLayout> from_env(const std::function<const char*(const char*)>& getenv);
  static StoreLayout at(const std::filesystem::path& home) { return {home, home / "models"}; }
};

// A model ready to load: the manifest and the absolute path of its checked blob.
struct ResolvedModel {
  Manifest manifest;
  std::filesystem::path blob_path;
};

struct VerifyReport {
  std::string name;
  std::string expected_digest, actual_digest;
  uint64_t expected_size = 0, actual_size = 0;
  bool ok() const { return expected_digest == actual_digest && expected_size == actual_size; }
};

// How a local file enters the store.
enum class ImportMode {
  link_or_copy,  // hard link when on the same filesystem (no copy, instant), else copy
  copy,          // always copy (the store never shares an inode with the user's file)
};

struct CreateOptions {
  std::string source;  // recorded in the manifest; defaults to the file path
  std::string system;
  std::string template_text;
  nlohmann::json parameters = nlohmann::json::object();
  nlohmann::json validators = nlohmann::json::object();  // the source's validators (manifest.h)
  ImportMode mode = ImportMode::link_or_copy;
};

class Store;

// RAII pin: while alive, the digest's blob survives garbage collection (a writer between
// "blob in place" and "manifest written" holds one).
class BlobPin {
 public:
  BlobPin() = default;
  BlobPin(Store* s, std::string digest) : store_(s), digest_(std::move(digest)) {}
  BlobPin(BlobPin&& o) noexcept : store_(o.store_), digest_(std::move(o.digest_)) { o.store_ = nullptr; }
  BlobPin& operator=(BlobPin&& o) noexcept;
  BlobPin(const BlobPin&) = delete;
  BlobPin& operator=(const BlobPin&) = delete;
  ~BlobPin();

 private:
  Store* store_ = nullptr;
  std::string digest_;
};

class Store {
 public:
  // Creates the directories if needed and removes stray temp files left by a crash.
  static Result<std::unique_ptr<Store>> open(StoreLayout layout);

  const StoreLayout& layout() const { return layout_; }

  // --- reading (what the scheduler and /api/tags need) ---
  // The manifest for `name` and its blob, after checking the blob exists, has the manifest's size
  // and starts with a GGUF header. not_found: no such model; corrupt: the blob is damaged.
  Result<ResolvedModel> resolve(const ModelName& name) const;
  Result<ResolvedModel> resolve(std::string_view name) const;
  Result<Manifest> read_manifest(const ModelName& name) const;
  // Every valid manifest, sorted by display name. Unreadable manifests are skipped (and named in
  // `problems` when given), so one bad file never hides the others.
  std::vector<Manifest> list(std::vector<std::string>* problems = nullptr) const;

  // --- blobs ---
  std::filesystem::path blob_path(const std::string& digest) const;  // digest must be valid
  bool has_blob(const std::string& digest) const;
  // Moves a complete file (in the blobs directory, e.g. a finished .part) to its content address.
  // `digest` must be the hash of its bytes (the caller computed it while writing).
  Result<void> commit_blob(const std::filesystem::path& file, const std::string& digest);
  // Hashes a local file and places it under blobs/ (hard link or streaming copy); returns the digest.
  Result<std::string> import_file(const std::filesystem::path& file, ImportMode mode);
  BlobPin pin(const std::string& digest);

  // --- writing models ---
  // Adds (or replaces) `name` from a local GGUF file. The file is checked to be GGUF first.
  Result<Manifest> create(const ModelName& name, const std::filesystem::path& gguf, CreateOptions opt);
  // Adds (or replaces) `name` pointing at a blob already in the store.
  Result<Manifest> create_from_blob(const ModelName& name, const std::string& digest, CreateOptions opt);
  // Writes a manifest; its blob must exist. Replacing a name may leave the old blob unreferenced,
  // in which case it is collected.
  Result<void> put_manifest(const Manifest& m);
  Result<Manifest> copy(const ModelName& from, const ModelName& to);
  // Removes the name; the blob goes too unless another manifest (or a pin) still references it.
  Result<void> remove(const ModelName& name);
  // Deletes blobs no manifest references and nothing pins (orphans of a crash between blob and
  // manifest, or of a failed create). Returns how many were removed. ".part" files are left to jobs.
  size_t collect_garbage();
  // Deletes one blob if nothing references or pins it (after a failed create from that blob).
  void release_blob(const std::string& digest);
  // Re-hashes the blob as a stream and compares with the manifest.
  Result<VerifyReport> verify(const ModelName& name,
                              const std::function<bool(uint64_t)>& on_progress = {}) const;

 private:
  explicit Store(StoreLayout layout) : layout_(std::move(layout)) {}
  friend class BlobPin;
  void unpin(const std::string& digest);
  std::filesystem::path manifest_file(const ModelName& name) const;
  // Names are case-insensitive (as in ollama): the stored spelling of `name` when a manifest
  // matches it ignoring ASCII case, else `name` itself.
  ModelName stored_name(const ModelName& name) const;
  // Unlinks a manifest and the directories it leaves empty.
  Result<void> remove_manifest_file(const std::filesystem::path& file);
  // Deletes the blob when nothing references or pins it. Caller holds mu_.
  void collect_if_unreferenced_locked(const std::string& digest);

  StoreLayout layout_;
  mutable std::mutex mu_;                     // serialises manifest writes/removals and GC
  std::map<std::string, int> pins_;           // digest -> pin count
};

// Reads family, parameter size and quantization level from a GGUF file's header.
Result<ModelDetails> read_model_details(const std::filesystem::path& gguf);
// Cheap header check: the file starts with "GGUF" and a supported version (2 or 3).
Result<void> check_gguf_header(const std::filesystem::path& file);

}  // namespace nurl
