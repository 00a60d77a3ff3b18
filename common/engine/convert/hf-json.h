// Reading a checkpoint's JSON files (config.json, tokenizer_config.json, the shard index, ...)
// with errors that name the file and the key: a JsonDoc is a parsed file plus typed getters that
// check type and range. Files are size-bounded before parsing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nurl::convert {

using Json = nlohmann::json;

struct JsonDoc {
  std::string name;  // file name for messages ("config.json")
  Json root;

  // Parses bytes (fuzzing, tests); the top level must be an object.
  static Result<JsonDoc> parse(std::string_view text, std::string name);
  // Reads and parses a file of at most max_bytes.
  static Result<JsonDoc> load(const std::filesystem::path& path, uint64_t max_bytes = uint64_t(64) << 20);

  bool has(std::string_view key) const;  // present and not null
  // An integer in [lo, hi]; the error names the file and key.
  Result<int64_t> get_int(std::string_view key, int64_t lo, int64_t hi) const;
  Result<int64_t> get_int_or(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const;
  Result<double> get_number(std::string_view key) const;
  Result<double> get_number_or(std::string_view key, double dflt) const;
  Result<bool> get_bool_or(std::string_view key, bool dflt) const;
  Result<std::string> get_string_or(std::string_view key, std::string dflt) const;
  const Json* find(std::string_view key) const;  // nullptr when absent or null

  Error error(std::string_view key, const std::string& what) const;
};

// Reads a whole small file (bounded); the error names it.
Result<std::string> read_file_bounded(const std::filesystem::path& path, uint64_t max_bytes);

}  // namespace nurl::convert
