// JsonDoc: checked access to a checkpoint's JSON files (see hf-json.h).
#include "engine/convert/hf-json.h"

#include <cmath>
#include <fstream>

#include "core/json-text.h"

namespace nurl::convert {

Result<std::string> read_file_bounded(const std::filesystem::path& path, uint64_t max_bytes) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error(ec == std::errc::no_such_file_or_directory ? Code::not_found : Code::io,
                       path.string() + ": " + ec.message());
  if (size > max_bytes)
    return Error(Code::corrupt, path.string() + ": " + std::to_string(size) + " bytes, more than the " +
                                    std::to_string(max_bytes) + " a file of this kind may have");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(Code::io, path.string() + ": cannot open");
  std::string s(size_t(size), '\0');
  in.read(s.data(), std::streamsize(size));
  if (uint64_t(in.gcount()) != size) return Error(Code::io, path.string() + ": short read");
  return s;
}

Result<JsonDoc> JsonDoc::parse(std::string_view text, std::string name) {
  JsonDoc d;
  d.name = std::move(name);
  d.root = parse_json(text);
  if (d.root.is_discarded()) return Error(Code::corrupt, d.name + ": not valid JSON");
  if (!d.root.is_object()) return Error(Code::corrupt, d.name + ": the top level is not a JSON object");
  return d;
}

Result<JsonDoc> JsonDoc::load(const std::filesystem::path& path, uint64_t max_bytes) {
  NURL_ASSIGN(std::string text, read_file_bounded(path, max_bytes));
  return parse(text, path.filename().string());
}

Error JsonDoc::error(std::string_view key, const std::string& what) const {
  return Error(Code::corrupt, name + ": \"" + std::string(key) + "\" " + what);
}

const Json* JsonDoc::find(std::string_view key) const {
  auto it = root.find(key);
  return it == root.end() || it->is_null() ? nullptr : &*it;
}

bool JsonDoc::has(std::string_view key) const { return find(key) != nullptr; }

Result<int64_t> JsonDoc::get_int(std::string_view key, int64_t lo, int64_t hi) const {
  const Json* v = find(key);
  if (!v) return Error(Code::not_found, name + ": \"" + std::string(key) + "\" is missing");
  int64_t x = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX)) return error(key, "is out of range");
    x = v->get<int64_t>();
  } else if (v->is_number_float() && std::isfinite(v->get<double>()) && std::floor(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9e15) {
    x = int64_t(v->get<double>());
  } else {
    return error(key, "is not an integer");
  }
  if (x < lo || x > hi)
    return error(key, "= " + std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

Result<int64_t> JsonDoc::get_int_or(std::string_view key, int64_t dflt, int64_t lo, int64_t hi) const {
  if (!has(key)) return dflt;
  return get_int(key, lo, hi);
}

Result<double> JsonDoc::get_number(std::string_view key) const {
  const Json* v = find(key);
  if (!v) return Error(Code::not_found, name + ": \"" + std::string(key) + "\" is missing");
  if (!v->is_number() || !std::isfinite(v->get<double>())) return error(key, "is not a finite number");
  return v->get<double>();
}

Result<double> JsonDoc::get_number_or(std::string_view key, double dflt) const {
  if (!has(key)) return dflt;
  return get_number(key);
}

Result<bool> JsonDoc::get_bool_or(std::string_view key, bool dflt) const {
  const Json* v = find(key);
  if (!v) return dflt;
  if (!v->is_boolean()) return error(key, "is not true or false");
  return v->get<bool>();
}

Result<std::string> JsonDoc::get_string_or(std::string_view key, std::string dflt) const {
  const Json* v = find(key);
  if (!v) return dflt;
  if (!v->is_string()) return error(key, "is not a string");
  return v->get<std::string>();
}

}  // namespace nurl::convert
