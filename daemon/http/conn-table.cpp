#include "http/conn-table.h"

#include <algorithm>

namespace nurl::http {

template <class Pick>
uint64_t ConnectionTable::oldest_idle(Pick pick) const {
  uint64_t best = 0, best_since = 0;
  for (const auto& [id, e] : conns_) {
    if (e.state != State::idle || !pick(e)) continue;
    if (best == 0 || e.idle_since < best_since) {
      best = id;
      best_since = e.idle_since;
    }
  }
  return best;
}

void ConnectionTable::drop(std::map<uint64_t, Entry>::iterator it) {
  const Entry& e = it->second;
  if (e.origin == Origin::unix_socket) {
    --n_unix_;
  } else {
    --n_tcp_;
    if (e.origin == Origin::remote) --n_remote_;
    auto p = per_peer_.find(e.peer);
    if (p != per_peer_.end() && --p->second == 0) per_peer_.erase(p);
  }
  conns_.erase(it);
}

size_t ConnectionTable::count_from(const std::string& peer) const {
  auto it = per_peer_.find(peer);
  return it == per_peer_.end() ? 0 : it->second;
}

ConnectionTable::Admission ConnectionTable::admit(const std::string& peer, Origin origin) {
  Admission a;
  auto evict = [&](uint64_t id) {
    a.evict.push_back(id);
    drop(conns_.find(id));
  };
  if (origin == Origin::unix_socket) {
    if (n_unix_ >= limits_.unix_total) {
      a.refusal = "server busy: too many connections on the control socket";
      return a;
    }
  } else {
    if (count_from(peer) >= limits_.per_peer) {
      uint64_t v = oldest_idle([&](const Entry& e) { return e.peer == peer; });
      if (v == 0) {
        a.refusal = "server busy: too many connections from " + peer + " (limit " + std::to_string(limits_.per_peer) +
                    " per address)";
        return a;
      }
      evict(v);
    }
    const size_t total = std::max<size_t>(limits_.total, 1);
    const size_t remote_cap = std::max<size_t>(total > limits_.reserve ? total - limits_.reserve : 1, 1);
    while (true) {
      const bool remote_full = origin == Origin::remote && n_remote_ >= remote_cap;
      if (n_tcp_ < total && !remote_full) break;
      // A remote newcomer over the remote share must replace a remote connection.
      uint64_t v = oldest_idle([&](const Entry& e) { return !remote_full || e.origin == Origin::remote; });
      if (v == 0) {
        a.refusal = "server busy: too many connections";
        return a;
      }
      evict(v);
    }
  }
  a.id = ++next_id_;
  Entry e;
  e.peer = peer;
  e.origin = origin;
  conns_.emplace(a.id, e);
  if (origin == Origin::unix_socket) {
    ++n_unix_;
  } else {
    ++n_tcp_;
    if (origin == Origin::remote) ++n_remote_;
    ++per_peer_[peer];
  }
  return a;
}

void ConnectionTable::set_state(uint64_t id, State s) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if (s == State::idle && it->second.state != State::idle) it->second.idle_since = ++clock_;
  it->second.state = s;
}

void ConnectionTable::remove(uint64_t id) {
  auto it = conns_.find(id);
  if (it != conns_.end()) drop(it);
}

}  // namespace nurl::http
