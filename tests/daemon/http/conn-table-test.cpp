// ConnectionTable: one address cannot take every connection; idle keep-alive connections are
// the first to go; loopback keeps a reserve; the Unix socket is counted apart.
#include "http/conn-table.h"

#include <gtest/gtest.h>

namespace nurl::http {
namespace {

using Origin = ConnectionTable::Origin;
using State = ConnectionTable::State;

TEST(ConnTable, PerAddressCapReplacesTheAddressesOwnIdleConnectionsFirst) {
  ConnectionTable t({.total = 100, .per_peer = 3, .reserve = 0, .unix_total = 10});
  std::vector<uint64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(t.admit("10.0.0.1", Origin::remote).id);
  auto refused = t.admit("10.0.0.1", Origin::remote);
  EXPECT_EQ(refused.id, 0u);
  EXPECT_NE(refused.refusal.find("from 10.0.0.1"), std::string::npos) << refused.refusal;
  EXPECT_NE(t.admit("10.0.0.2", Origin::remote).id, 0u);  // another address is unaffected
  t.set_state(ids[1], State::idle);
  t.set_state(ids[2], State::idle);
  t.set_state(ids[1], State::busy);  // a new request on it: no longer idle
  auto a = t.admit("10.0.0.1", Origin::remote);
  ASSERT_NE(a.id, 0u);
  EXPECT_EQ(a.evict, std::vector<uint64_t>{ids[2]});
  EXPECT_EQ(t.count_from("10.0.0.1"), 3u);
}

TEST(ConnTable, AtTheGlobalCapTheLongestIdleGoes) {
  ConnectionTable t({.total = 4, .per_peer = 10, .reserve = 0, .unix_total = 10});
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(t.admit("10.0.0." + std::to_string(i), Origin::remote).id);
  EXPECT_EQ(t.admit("10.0.0.9", Origin::remote).id, 0u);  // all busy or waiting: refused
  t.set_state(ids[3], State::idle);
  t.set_state(ids[0], State::idle);
  auto a = t.admit("10.0.0.9", Origin::remote);
  ASSERT_NE(a.id, 0u);
  EXPECT_EQ(a.evict, std::vector<uint64_t>{ids[3]});  // idle first, so idle longest
  EXPECT_EQ(t.tcp_count(), 4u);
}

TEST(ConnTable, LoopbackKeepsAReserveAndTheUnixSocketIsApart) {
  ConnectionTable t({.total = 10, .per_peer = 100, .reserve = 2, .unix_total = 2});
  for (int i = 0; i < 8; ++i) ASSERT_NE(t.admit("10.0.0." + std::to_string(i), Origin::remote).id, 0u);
  EXPECT_EQ(t.admit("10.0.1.1", Origin::remote).id, 0u);  // remote share used up
  EXPECT_NE(t.admit("127.0.0.1", Origin::loopback).id, 0u);
  EXPECT_NE(t.admit("127.0.0.1", Origin::loopback).id, 0u);
  EXPECT_EQ(t.admit("127.0.0.1", Origin::loopback).id, 0u);  // the whole cap is used
  EXPECT_NE(t.admit("", Origin::unix_socket).id, 0u);
  auto u2 = t.admit("", Origin::unix_socket).id;
  EXPECT_NE(u2, 0u);
  EXPECT_EQ(t.admit("", Origin::unix_socket).id, 0u);
  t.remove(u2);
  t.remove(u2);  // idempotent
  EXPECT_NE(t.admit("", Origin::unix_socket).id, 0u);
}

TEST(ConnTable, RemovingFreesTheAddressesCount) {
  ConnectionTable t({.total = 10, .per_peer = 1, .reserve = 0, .unix_total = 1});
  auto a = t.admit("::1", Origin::loopback).id;
  EXPECT_EQ(t.admit("::1", Origin::loopback).id, 0u);
  t.remove(a);
  EXPECT_EQ(t.count_from("::1"), 0u);
  EXPECT_NE(t.admit("::1", Origin::loopback).id, 0u);
}

}  // namespace
}  // namespace nurl::http
