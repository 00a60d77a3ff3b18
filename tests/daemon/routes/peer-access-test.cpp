// Which client-named paths the daemon acts on, judged for another user (uid 4242 in group 4242,
// no supplementary groups: no passwd entry) against files this test (root) owns and chmods. The
// oracle is the POSIX permission rule itself: owner, then group, then other bits; search on
// every directory above.
#include "routes/peer-access.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "support/temp-dir.h"

namespace nurl {
namespace {

namespace fs = std::filesystem;

http::Peer unix_peer(int uid, int gid) {
  http::Peer p;
  p.unix_socket = p.trusted = true;
  p.uid = uid;
  p.gid = gid;
  return p;
}

class PeerAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to own files for another user";
    ::chmod(dir_.path().c_str(), 0755);
    fs::create_directories(dir_ / "d");
    std::ofstream(dir_ / "d" / "model.gguf") << "GGUF";
    std::ofstream(dir_ / "d" / "config.json") << "{}";
  }
  void mode(const std::string& rel, mode_t m, uid_t uid = 0, gid_t gid = 0) {
    fs::path p = dir_ / rel;
    ASSERT_EQ(::chown(p.c_str(), uid, gid), 0);
    ASSERT_EQ(::chmod(p.c_str(), m), 0);
  }
  std::string at(const std::string& rel) { return (dir_ / rel).string(); }
  test::TempDir dir_;
  const http::Peer other_ = unix_peer(4242, 4242);
};

TEST_F(PeerAccessTest, ReadByPermissionBits) {
  mode("d", 0755);
  mode("d/model.gguf", 0644);
  EXPECT_TRUE(peer_readable(other_, at("d/model.gguf")).ok());
  mode("d/model.gguf", 0600);
  EXPECT_FALSE(peer_readable(other_, at("d/model.gguf")).ok()) << "owner-only file";
  mode("d/model.gguf", 0640, 0, 4242);
  EXPECT_TRUE(peer_readable(other_, at("d/model.gguf")).ok()) << "group-readable, the peer's group";
  mode("d/model.gguf", 0604, 0, 4242);
  EXPECT_FALSE(peer_readable(other_, at("d/model.gguf")).ok()) << "the group bits rule for group members";
  mode("d/model.gguf", 0400, 4242, 0);
  EXPECT_TRUE(peer_readable(other_, at("d/model.gguf")).ok()) << "the peer owns it";
  mode("d/model.gguf", 0644);
  mode("d", 0700);
  auto r = peer_readable(other_, at("d/model.gguf"));
  ASSERT_FALSE(r.ok()) << "a directory above is closed";
  EXPECT_NE(r.error().msg.find("permission denied"), std::string::npos) << r.error().msg;
  // The daemon's own uid and root act as the kernel lets them.
  EXPECT_TRUE(peer_readable(unix_peer(0, 0), at("d/model.gguf")).ok());
  EXPECT_EQ(peer_readable(other_, at("d/missing.gguf")).error().code, Code::not_found);
}

TEST_F(PeerAccessTest, DirectoriesNeedEveryFileReadable) {
  mode("d", 0755);
  mode("d/model.gguf", 0644);
  mode("d/config.json", 0644);
  EXPECT_TRUE(peer_readable(other_, at("d")).ok());
  mode("d/config.json", 0600);
  auto r = peer_readable(other_, at("d"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().msg.find("config.json"), std::string::npos) << r.error().msg;
  mode("d/config.json", 0644);
  mode("d", 0711);
  EXPECT_FALSE(peer_readable(other_, at("d")).ok()) << "a directory it cannot list";
}

TEST_F(PeerAccessTest, SymlinksAreJudgedAtTheirTarget) {
  mode("d", 0700);
  fs::create_symlink(dir_ / "d" / "model.gguf", dir_ / "link.gguf");
  EXPECT_FALSE(peer_readable(other_, at("link.gguf")).ok()) << "a link out of a closed directory";
}

TEST_F(PeerAccessTest, OutputsNeedAWritableDirectory) {
  mode("d", 0755);
  EXPECT_FALSE(peer_writable(other_, at("d/out.gguf")).ok());
  mode("d", 0775, 0, 4242);
  auto w = peer_writable(other_, at("d/out.gguf"));
  ASSERT_TRUE(w.ok()) << w.error().msg;
  EXPECT_EQ(*w, fs::canonical(dir_ / "d") / "out.gguf");
  mode("d/model.gguf", 0644);
  EXPECT_FALSE(peer_writable(other_, at("d/model.gguf")).ok()) << "an existing file it may not write";
  EXPECT_FALSE(peer_writable(other_, "relative.gguf").ok());
  EXPECT_FALSE(peer_writable(other_, at("d")).ok()) << "a directory is no output file";
  EXPECT_FALSE(peer_writable(other_, at("nope/out.gguf")).ok());
}

TEST_F(PeerAccessTest, TcpPeersNeverPassPaths) {
  http::Peer tcp;
  EXPECT_FALSE(peer_readable(tcp, at("d/model.gguf")).ok());
  EXPECT_FALSE(peer_writable(tcp, at("d/out.gguf")).ok());
}

}  // namespace
}  // namespace nurl
