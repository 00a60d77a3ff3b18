// ConnectionTable: who holds the server's connections, and who is let in next. Socket-free so it
// is unit tested; the server keeps it under its own mutex and closes what admit() evicts.
//
// Rules (one address must not lock out everyone else):
// - at most `per_peer` connections per TCP address; at that cap a newcomer from the address
//   replaces the address's oldest idle keep-alive connection, or is refused;
// - at most `total` TCP connections; remote (non-loopback) addresses may use all but `reserve`
//   of them, so loopback clients always find room; at the cap the oldest idle keep-alive
//   connection anywhere is closed for the newcomer, or it is refused;
// - Unix-socket connections are counted apart (`unix_total`), so the local control socket keeps
//   answering whatever TCP clients do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nurl::http {

struct ConnLimits {
  size_t total = 512;
  size_t per_peer = 64;
  size_t reserve = 32;  // of `total`, kept for loopback clients
  size_t unix_total = 512;
};

class ConnectionTable {
 public:
  enum class Origin { remote, loopback, unix_socket };
  enum class State { waiting_first, busy, idle };  // no request yet / serving one / keep-alive wait

  struct Admission {
    uint64_t id = 0;               // 0: refused
    std::vector<uint64_t> evict;   // idle keep-alive connections to close for this one
    std::string refusal;           // why, when refused
  };

  explicit ConnectionTable(ConnLimits limits) : limits_(limits) {}

  // A new connection from `peer` (its IP address; "" for Unix sockets).
  Admission admit(const std::string& peer, Origin origin);
  void set_state(uint64_t id, State s);
  void remove(uint64_t id);  // idempotent
  void set_limits(ConnLimits l) { limits_ = l; }

  size_t tcp_count() const { return n_tcp_; }
  size_t remote_count() const { return n_remote_; }
  size_t count_from(const std::string& peer) const;

 private:
  struct Entry {
    std::string peer;
    Origin origin;
    State state = State::waiting_first;
    uint64_t idle_since = 0;  // a sequence number: smaller = idle longer
  };
  // The idle connection that has waited longest, among those `pick` accepts; 0 when none.
  template <class Pick>
  uint64_t oldest_idle(Pick pick) const;
  void drop(std::map<uint64_t, Entry>::iterator it);

  ConnLimits limits_;
  std::map<uint64_t, Entry> conns_;
  std::map<std::string, size_t> per_peer_;
  size_t n_tcp_ = 0, n_remote_ = 0, n_unix_ = 0;
  uint64_t next_id_ = 0, clock_ = 0;
};

}  // namespace nurl::http
