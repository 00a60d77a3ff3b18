#include "web/assets.h"

namespace nurl::web {

const Asset* find_asset(std::string_view name) {
  for (const auto& a : assets())
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace nurl::web
