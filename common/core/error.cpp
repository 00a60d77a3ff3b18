#include "core/error.h"

namespace nurl {

const char* code_name(Code c) {
  switch (c) {
    case Code::invalid_argument: return "invalid_argument";
    case Code::not_found: return "not_found";
    case Code::already_exists: return "already_exists";
    case Code::unsupported: return "unsupported";
    case Code::corrupt: return "corrupt";
    case Code::io: return "io";
    case Code::busy: return "busy";
    case Code::cancelled: return "cancelled";
    case Code::internal: return "internal";
    case Code::rate_limited: return "rate_limited";
    case Code::no_space: return "no_space";
  }
  return "internal";
}

int http_status(Code c) {
  switch (c) {
    case Code::invalid_argument: return 400;
    case Code::not_found: return 404;
    case Code::already_exists: return 409;
    case Code::unsupported: return 400;
    case Code::corrupt: return 500;
    case Code::io: return 500;
    case Code::busy: return 503;
    case Code::cancelled: return 499;
    case Code::internal: return 500;
    case Code::rate_limited: return 429;
    case Code::no_space: return 507;
  }
  return 500;
}

}  // namespace nurl
