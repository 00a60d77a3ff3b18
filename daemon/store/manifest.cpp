// Manifest ⇄ JSON. Unknown fields are ignored so newer daemons can add fields.
#include "store/manifest.h"

#include <ctime>
#include <iomanip>
#include <sstream>

#include "store/sha256.h"

namespace nurl {

nlohmann::json manifest_to_json(const Manifest& m) {
  nlohmann::json j = {
      {"schema", 1},
      {"name", m.name.display()},
      {"tag", m.name.tag},
      {"source", m.source},
      {"digest", m.digest},
      {"size", m.size},
      {"format", m.details.format},
      {"added_at", m.added_at},
      {"details",
       {{"family", m.details.family},
        {"parameter_size", m.details.parameter_size},
        {"quantization_level", m.details.quantization_level}}},
  };
  if (!m.system.empty()) j["system"] = m.system;
  if (!m.template_text.empty()) j["template"] = m.template_text;
  if (!m.parameters.empty()) j["parameters"] = m.parameters;
  if (!m.validators.empty()) j["validators"] = m.validators;
  return j;
}

Result<Manifest> manifest_from_json(const nlohmann::json& j, const std::string& where) {
  auto bad = [&](const std::string& why) { return Error(Code::corrupt, "manifest " + where + ": " + why); };
  if (!j.is_object()) return bad("not a JSON object");
  auto str = [&](const char* k) -> std::string {
    auto it = j.find(k);
    return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
  };
  Manifest m;
  auto name = parse_model_name(str("name"));
  if (!name.ok()) return bad(name.error().msg);
  m.name = *name;
  m.source = str("source");
  m.digest = str("digest");
  if (!digest_hex(m.digest).ok()) return bad("invalid digest \"" + m.digest + "\"");
  auto sz = j.find("size");
  if (sz == j.end() || !sz->is_number_unsigned()) return bad("missing size");
  m.size = sz->get<uint64_t>();
  m.added_at = str("added_at");
  m.details.format = str("format").empty() ? "gguf" : str("format");
  if (auto d = j.find("details"); d != j.end() && d->is_object()) {
    m.details.family = d->value("family", "");
    m.details.parameter_size = d->value("parameter_size", "");
    m.details.quantization_level = d->value("quantization_level", "");
  }
  m.system = str("system");
  m.template_text = str("template");
  if (auto p = j.find("parameters"); p != j.end() && p->is_object()) m.parameters = *p;
  if (auto v = j.find("validators"); v != j.end() && v->is_object()) m.validators = *v;
  return m;
}

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& s) {
  std::tm tm{};
  std::istringstream ss(s);
  ss >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (ss.fail()) return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace nurl
