#include "client/modelfile.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace nurl::client {

namespace {

std::string trim(std::string s) {
  auto ws = [](unsigned char c) { return std::isspace(c); };
  while (!s.empty() && ws(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && ws(s[i])) ++i;
  return s.substr(i);
}

std::string upper(std::string s) {
  for (auto& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Strips one layer of "..." quoting.
std::string unquote(std::string v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

}  // namespace

Result<Modelfile> parse_modelfile(const std::string& text) {
  Modelfile mf;
  size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    ++line_no;
    pos = eol + 1;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t sp = t.find_first_of(" \t");
    std::string cmd = upper(t.substr(0, sp));
    std::string rest = sp == std::string::npos ? "" : trim(t.substr(sp));
    // Triple-quoted value, possibly spanning lines.
    if (rest.rfind("\"\"\"", 0) == 0) {
      std::string body = rest.substr(3);
      size_t close = body.find("\"\"\"");
      while (close == std::string::npos) {
        if (pos >= text.size())
          return Error(Code::invalid_argument, "Modelfile line " + std::to_string(line_no) + ": unterminated \"\"\"");
        size_t e2 = text.find('\n', pos);
        if (e2 == std::string::npos) e2 = text.size();
        body += "\n" + text.substr(pos, e2 - pos);
        pos = e2 + 1;
        ++line_no;
        close = body.find("\"\"\"");
      }
      rest = body.substr(0, close);
    } else {
      rest = unquote(rest);
    }
    const std::string where = "Modelfile line " + std::to_string(line_no) + ": ";
    if (cmd == "FROM") {
      if (rest.empty()) return Error(Code::invalid_argument, where + "FROM needs a model or a .gguf path");
      mf.from = rest;
    } else if (cmd == "SYSTEM") {
      mf.system = rest;
      mf.has_system = true;
    } else if (cmd == "TEMPLATE") {
      mf.tmpl = rest;
      mf.has_template = true;
    } else if (cmd == "PARAMETER") {
      size_t s2 = rest.find_first_of(" \t");
      if (s2 == std::string::npos) return Error(Code::invalid_argument, where + "PARAMETER needs a name and a value");
      mf.parameters.emplace_back(rest.substr(0, s2), unquote(trim(rest.substr(s2))));
    } else if (cmd == "MESSAGE") {
      size_t s2 = rest.find_first_of(" \t");
      if (s2 == std::string::npos) return Error(Code::invalid_argument, where + "MESSAGE needs a role and a text");
      mf.messages.emplace_back(rest.substr(0, s2), trim(rest.substr(s2)));
    } else if (cmd == "LICENSE") {
      mf.license = rest;
    } else if (cmd == "ADAPTER") {
      return Error(Code::unsupported, where + "ADAPTER (LoRA) is not supported yet");
    } else {
      return Error(Code::invalid_argument, where + "unknown instruction '" + cmd + "'");
    }
  }
  if (mf.from.empty()) return Error(Code::invalid_argument, "Modelfile has no FROM line");
  return mf;
}

Result<nlohmann::json> parameters_json(const std::vector<std::pair<std::string, std::string>>& params) {
  static const char* kInts[] = {"num_ctx", "num_predict", "top_k", "seed", "repeat_last_n", "num_keep",
                                "num_batch", "num_thread", "num_gpu"};
  static const char* kFloats[] = {"temperature", "top_p", "min_p", "typical_p", "repeat_penalty",
                                  "presence_penalty", "frequency_penalty"};
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, value] : params) {
    auto is = [&](const auto& list) {
      return std::find_if(std::begin(list), std::end(list), [&](const char* n) { return name == n; }) != std::end(list);
    };
    char* end = nullptr;
    if (name == "stop") {
      out["stop"].push_back(value);
    } else if (is(kInts)) {
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (end == value.c_str() || *end) return Error(Code::invalid_argument, "PARAMETER " + name + ": not an integer: " + value);
      out[name] = v;
    } else if (is(kFloats)) {
      double v = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end) return Error(Code::invalid_argument, "PARAMETER " + name + ": not a number: " + value);
      out[name] = v;
    } else {
      return Error(Code::invalid_argument, "unknown PARAMETER '" + name + "'");
    }
  }
  return out;
}

}  // namespace nurl::client
