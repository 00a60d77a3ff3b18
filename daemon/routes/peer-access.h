// Paths a client hands the daemon over the Unix socket (FROM ./model.gguf, a checkpoint
// directory, `-o out.gguf`): the daemon acts on them only when the peer itself could. Root and
// the daemon's own uid pass (the daemon can do nothing they could not); any other peer (a member
// of the service group) is judged by the permission bits as the kernel would judge that user
// with its groups: search on every directory above, read on the file (read and search on a
// directory and read on its files), write and search on an output's directory. POSIX ACLs are
// not consulted, so an ACL-only grant is refused (the safe side). TCP peers never pass paths.
#pragma once

#include <filesystem>
#include <string>

#include "core/error.h"
#include "http/message.h"

namespace nurl {

// The canonical path of an existing file or directory the peer may read.
Result<std::filesystem::path> peer_readable(const http::Peer& peer, const std::string& path);
// The normalised absolute path of an output file whose directory the peer may write.
Result<std::filesystem::path> peer_writable(const http::Peer& peer, const std::string& path);

}  // namespace nurl
