// Socket activation: the listeners systemd passes (LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES; read
// with sd_listen_fds_with_names, which also clears them so children do not inherit them).
// A descriptor named "http" is the TCP API port, "control" the Unix control socket (a socket unit
// per listener, each with FileDescriptorName=). One without a name (LISTEN_FDNAMES unset) or with
// systemd's default name, its socket unit's ("nurllamad.socket", which holds both listeners), is
// matched by its family: inet → http, AF_UNIX → control. Whatever is not passed, the daemon binds
// itself.
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
