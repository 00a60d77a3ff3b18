#include "service/listen-fds.h"

#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace nurl::service {

Result<InheritedListeners> take_listen_fds() {
  char** names = nullptr;
  const int n = sd_listen_fds_with_names(1, &names);
  if (n < 0) return Error(Code::invalid_argument, std::string("socket activation: ") + std::strerror(-n));
  InheritedListeners out;
  Result<void> bad = ok();
  for (int i = 0; i < n; ++i) {
    const int fd = SD_LISTEN_FDS_START + i;
    const std::string name = names && names[i] ? names[i] : "unknown";
    const bool is_inet = sd_is_socket_inet(fd, 0, SOCK_STREAM, 1, 0) > 0;
    const bool is_unix = sd_is_socket_unix(fd, SOCK_STREAM, 1, nullptr, 0) > 0;
    const std::string what = "socket activation: descriptor " + std::to_string(fd) + " (\"" + name + "\")";
    // Without FileDescriptorName= systemd names a descriptor after its socket unit: one unit
    // (like the shipped nurllamad.socket) may hold both listeners, so those go by family too.
    const bool by_family = name == "unknown" || name.ends_with(".socket");
    if (name == "http" || (by_family && is_inet)) {
      if (is_inet) out.http.push_back(fd);
      else if (bad.ok()) bad = Error(Code::invalid_argument, what + " is not a listening TCP socket");
    } else if (name == "control" || (by_family && is_unix)) {
      if (is_unix) out.control.push_back(fd);
      else if (bad.ok()) bad = Error(Code::invalid_argument, what + " is not a listening Unix stream socket");
    } else if (bad.ok()) {
      bad = Error(Code::invalid_argument,
                  what + " has an unknown name (FileDescriptorName= must be \"http\" or \"control\", or unset)");
    }
  }
  if (names) {
    for (int i = 0; i < n; ++i) std::free(names[i]);
    std::free(names);
  }
  if (!bad.ok()) {
    for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; ++fd) ::close(fd);
    return bad.error();
  }
  return out;
}

}  // namespace nurl::service
