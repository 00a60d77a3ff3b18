// Model names → the GGUF file to run, plus what a store manifest adds (template, system,
// default options). Names are validated first: no control characters, no "..", no
// backslashes. A path to a .gguf is accepted from control-socket peers, and over TCP only when
// allow_model_paths is set (development, tests).
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "api/ollama.h"
#include "core/error.h"
#include "http/message.h"

namespace nurl {

struct ModelRef {
  std::string name;               // what /api/ps and responses call it
  std::string path;               // the GGUF file
  std::string template_override;  // a Jinja chat template replacing tokenizer.chat_template
  std::string system;             // default system prompt
  api::Options defaults;          // default options (Modelfile PARAMETERs)
  std::string digest;             // "sha256:..." when known
  std::chrono::system_clock::time_point modified_at{};
};

// The store's resolver (set by the daemon once a store exists): not_found for unknown names.
using StoreResolver = std::function<Result<ModelRef>(const std::string& name)>;

class Store;
// Resolves through store.resolve(): manifest (template, system, parameters) + checked blob.
StoreResolver store_resolver(const Store& store);

Result<void> validate_model_name(const std::string& name);
bool looks_like_path(const std::string& name);

// Errors: invalid_argument (bad name, path not allowed), not_found ("model 'X' not found").
Result<ModelRef> resolve_model(const std::string& name, const http::Peer& peer, bool allow_paths,
                                    const StoreResolver& store);

}  // namespace nurl
