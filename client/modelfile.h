// Modelfile parsing (ollama's format): FROM, SYSTEM, TEMPLATE, PARAMETER (repeatable),
// ADAPTER/LICENSE/MESSAGE are recognised; values may be """triple-quoted""" across lines.
// The client turns the result into /api/create's structured fields.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nurl::client {

struct Modelfile {
  std::string from;
  std::string system;
  std::string tmpl;  // TEMPLATE: a Jinja chat template replacing the GGUF's
  bool has_system = false, has_template = false;
  std::vector<std::pair<std::string, std::string>> parameters;  // in file order
  std::vector<std::pair<std::string, std::string>> messages;    // MESSAGE role text
  std::string license;
};

Result<Modelfile> parse_modelfile(const std::string& text);

// PARAMETER values typed as the API wants them: numbers for numeric options, lists for stop.
Result<nlohmann::json> parameters_json(const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace nurl::client
