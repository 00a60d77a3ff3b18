// peer_readable / peer_writable (see peer-access.h).
#include "routes/peer-access.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace nurl {

namespace fs = std::filesystem;

namespace {

enum Want : unsigned { kRead = 4, kWrite = 2, kSearch = 1 };

struct Who {
  uid_t uid;
  std::vector<gid_t> groups;  // primary first
};

Who who(const http::Peer& peer) {
  Who w{static_cast<uid_t>(peer.uid), {static_cast<gid_t>(peer.gid)}};
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* pwp = nullptr;
  if (::getpwuid_r(w.uid, &pw, buf.data(), buf.size(), &pwp) != 0 || !pwp) return w;
  int n = 64;
  std::vector<gid_t> g(static_cast<size_t>(n));
  if (::getgrouplist(pwp->pw_name, static_cast<gid_t>(peer.gid), g.data(), &n) < 0) {
    g.resize(size_t(n));
    if (::getgrouplist(pwp->pw_name, static_cast<gid_t>(peer.gid), g.data(), &n) < 0) return w;
  }
  g.resize(size_t(n));
  for (gid_t x : g)
    if (std::find(w.groups.begin(), w.groups.end(), x) == w.groups.end()) w.groups.push_back(x);
  return w;
}

bool allowed(const struct stat& st, const Who& w, unsigned want) {
  unsigned bits;
  if (st.st_uid == w.uid) bits = (st.st_mode >> 6) & 7;
  else if (std::find(w.groups.begin(), w.groups.end(), st.st_gid) != w.groups.end()) bits = (st.st_mode >> 3) & 7;
  else bits = st.st_mode & 7;
  return (bits & want) == want;
}

bool trusted(const http::Peer& peer) {
  return peer.uid == 0 || peer.uid == static_cast<int>(::geteuid());
}

Error denied(const std::string& path, const std::string& what) {
  return Error(Code::invalid_argument, path + ": permission denied (" + what + ")");
}

// Search permission on every directory from / down to `dir` (inclusive).
Result<void> can_reach(const fs::path& dir, const Who& w, const std::string& shown) {
  fs::path cur;
  for (const auto& part : dir) {
    cur /= part;
    struct stat st {};
    if (::stat(cur.c_str(), &st) != 0) return Error(Code::not_found, shown + ": " + cur.string() + " does not exist");
    if (!allowed(st, w, kSearch)) return denied(shown, "no access to the directory " + cur.string());
  }
  return ok();
}

}  // namespace

Result<fs::path> peer_readable(const http::Peer& peer, const std::string& path) {
  if (!peer.unix_socket) return Error(Code::invalid_argument, "server paths are only accepted over the Unix socket");
  std::error_code ec;
  fs::path p = fs::canonical(path, ec);
  if (ec) return Error(Code::not_found, path + ": " + ec.message());
  if (trusted(peer)) return p;
  Who w = who(peer);
  NURL_TRY(can_reach(p.parent_path(), w, path));
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return Error(Code::not_found, path + ": does not exist");
  if (S_ISDIR(st.st_mode)) {
    if (!allowed(st, w, kRead | kSearch)) return denied(path, "the directory is not readable");
    for (auto it = fs::directory_iterator(p, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      struct stat fst {};
      if (::stat(it->path().c_str(), &fst) == 0 && S_ISREG(fst.st_mode) && !allowed(fst, w, kRead))
        return denied(path, it->path().filename().string() + " is not readable");
    }
    return p;
  }
  if (!allowed(st, w, kRead)) return denied(path, "the file is not readable");
  return p;
}

Result<fs::path> peer_writable(const http::Peer& peer, const std::string& path) {
  if (!peer.unix_socket) return Error(Code::invalid_argument, "server paths are only accepted over the Unix socket");
  fs::path p = fs::path(path);
  if (!p.is_absolute() || !p.has_filename())
    return Error(Code::invalid_argument, path + ": an output must be an absolute file path");
  std::error_code ec;
  fs::path dir = fs::canonical(p.parent_path(), ec);
  if (ec) return Error(Code::not_found, path + ": " + p.parent_path().string() + ": " + ec.message());
  p = dir / p.filename();
  if (fs::is_directory(p, ec)) return Error(Code::invalid_argument, path + ": is a directory");
  if (trusted(peer)) return p;
  Who w = who(peer);
  NURL_TRY(can_reach(dir, w, path));
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !allowed(st, w, kWrite | kSearch))
    return denied(path, "cannot write to " + dir.string());
  if (::stat(p.c_str(), &st) == 0 && !allowed(st, w, kWrite)) return denied(path, "the file is not writable");
  return p;
}

}  // namespace nurl
