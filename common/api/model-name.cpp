// Model name grammar (see model-name.h). Parsing is a straight split: tag at the last ':', then
// '/'-separated parts whose count decides host/namespace/model; every part is then validated.
#include "api/model-name.h"

#include <algorithm>
#include <vector>

namespace nurl {
namespace {

constexpr size_t kMaxNameLen = 512;
constexpr size_t kMaxSegmentLen = 128;

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_segment_char(char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

bool ends_with_gguf(std::string_view s) {
  if (s.size() <= 5) return false;
  std::string tail(s.substr(s.size() - 5));
  for (char& c : tail) c = lower(c);
  return tail == ".gguf";
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  return out;
}

Error bad(std::string_view name, const std::string& why) {
  return Error(Code::invalid_argument, "invalid model name \"" + std::string(name) + "\": " + why);
}

// A host is lower-case DNS labels ("registry.ollama.ai", "localhost"); ports are not supported.
bool valid_host(std::string_view h) {
  if (h.empty() || h.size() > 253 || h.find("..") != std::string_view::npos) return false;
  if (h.front() == '.' || h.front() == '-' || h.back() == '.') return false;
  return std::all_of(h.begin(), h.end(), [](char c) { return is_alnum(c) || c == '.' || c == '-'; });
}

}  // namespace

bool valid_name_segment(std::string_view s, size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  if (!is_alnum(s.front()) && s.front() != '_') return false;
  if (s.find("..") != std::string_view::npos) return false;
  return std::all_of(s.begin(), s.end(), is_segment_char);
}

bool ModelName::is_hf_file() const { return is_hf() && ends_with_gguf(tag); }

std::string ModelName::display() const {
  if (is_hf_file()) return host + "/" + ns + "/" + model + "/" + tag;
  std::string out;
  if (host != kDefaultHost) out = host + "/" + ns + "/";
  else if (ns != kDefaultNamespace) out = ns + "/";
  return out + model + ":" + tag;
}

std::string ModelName::manifest_path() const { return host + "/" + ns + "/" + model + "/" + tag; }

Result<ModelName> parse_model_name(std::string_view s) {
  if (s.empty()) return bad(s, "empty");
  if (s.size() > kMaxNameLen) return bad(s.substr(0, 64), "longer than 512 characters");
  for (char c : s) {
    if (!is_segment_char(c) && c != '/' && c != ':')
      return bad(s, "only letters, digits, '_', '.', '-', '/' and ':' are allowed");
  }

  // Tag: after the last ':', which must come after every '/'.
  std::string_view base = s;
  std::string_view tag;
  bool has_tag = false;
  if (size_t colon = s.rfind(':'); colon != std::string_view::npos) {
    if (s.find(':') != colon) return bad(s, "more than one ':'");
    size_t slash = s.rfind('/');
    if (slash != std::string_view::npos && slash > colon)
      return bad(s, "':' may only separate the tag at the end (host ports are not supported)");
    base = s.substr(0, colon);
    tag = s.substr(colon + 1);
    has_tag = true;
    if (tag.empty()) return bad(s, "empty tag after ':'");
  }

  auto parts = split(base, '/');
  for (auto p : parts)
    if (p.empty()) return bad(s, "empty path part (leading, trailing or double '/')");

  ModelName n;
  switch (parts.size()) {
    case 1:
      n.model = parts[0];
      break;
    case 2:
      n.ns = parts[0];
      n.model = parts[1];
      break;
    case 3:
    case 4: {
      std::string host(parts[0]);
      for (char& c : host) c = lower(c);
      if (host == "huggingface.co") host = std::string(kHfHost);
      if (host.find('.') == std::string::npos && host != "localhost")
        return bad(s, "too many '/' parts: use [host/][namespace/]model[:tag]");
      if (!valid_host(host)) return bad(s, "invalid host \"" + host + "\"");
      n.host = host;
      n.ns = parts[1];
      n.model = parts[2];
      if (parts.size() == 4) {
        if (host != kHfHost || !ends_with_gguf(parts[3]))
          return bad(s, "four parts are only allowed as hf.co/ORG/REPO/FILE.gguf");
        if (has_tag) return bad(s, "a .gguf file reference takes no tag");
        tag = parts[3];
        has_tag = true;
      }
      break;
    }
    default:
      return bad(s, "too many '/' parts");
  }
  if (has_tag) n.tag = tag;

  // HF organisations may contain '.', ollama namespaces may not.
  if (!valid_name_segment(n.ns, kMaxSegmentLen) || (!n.is_hf() && n.ns.find('.') != std::string::npos))
    return bad(s, "invalid namespace \"" + n.ns + "\"");
  if (!valid_name_segment(n.model, kMaxSegmentLen)) return bad(s, "invalid model \"" + n.model + "\"");
  if (!valid_name_segment(n.tag, kMaxSegmentLen)) return bad(s, "invalid tag \"" + n.tag + "\"");
  return n;
}

std::string sanitize_model_segment(std::string_view s) {
  std::string out;
  for (char c : s) {
    char l = lower(c);
    bool ok = is_alnum(l) || l == '_' || l == '.' || l == '-';
    if (!ok) l = '-';
    if ((l == '-' || l == '.') && (out.empty() || out.back() == '-' || out.back() == '.')) continue;
    out.push_back(l);
    if (out.size() >= 80) break;
  }
  while (!out.empty() && (out.back() == '-' || out.back() == '.')) out.pop_back();
  if (out.empty()) out = "model";
  return out;
}

}  // namespace nurl
