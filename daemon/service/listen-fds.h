// Socket activation: the listeners systemd passes (LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES; read
// with sd_listen_fds_with_names, which also clears them so children do not inherit them).
// nurllamad.socket names them: "http" (the TCP API port) and "control" (the Unix control socket).
// A socket without a name (LISTEN_FDNAMES unset) is matched by its family: inet → http,
// AF_UNIX → control. Whatever is not passed, the daemon binds itself.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace nurl::service {

struct InheritedListeners {
  std::vector<int> http;     // listening TCP sockets
  std::vector<int> control;  // listening Unix stream sockets
};

// Checks every passed descriptor is a listening stream socket of a known name (or, unnamed, of
// a known family); an error names the descriptor and what is wrong with it.
Result<InheritedListeners> take_listen_fds();

}  // namespace nurl::service
