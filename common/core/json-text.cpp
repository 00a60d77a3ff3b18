// The only translation unit that instantiates nlohmann's parser, lexer and serializer (for json
// and ordered_json, from contiguous text only). Product code goes through these functions instead
// of calling parse() or dump() itself, which would compile its own copy of them into its object.
#include "core/json-text.h"

namespace nurl {
namespace {

template <class J>
std::string dump_text(const J& j, int indent, InvalidUtf8 bad) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false,
                bad == InvalidUtf8::replace ? J::error_handler_t::replace : J::error_handler_t::strict);
}

}  // namespace

nlohmann::json parse_json(std::string_view text) { return nlohmann::json::parse(text, nullptr, false); }

nlohmann::ordered_json parse_ordered_json(std::string_view text) {
  return nlohmann::ordered_json::parse(text, nullptr, false);
}

std::string dump_json(const nlohmann::json& j, int indent, InvalidUtf8 bad) { return dump_text(j, indent, bad); }

std::string dump_json(const nlohmann::ordered_json& j, int indent, InvalidUtf8 bad) {
  return dump_text(j, indent, bad);
}

}  // namespace nurl
