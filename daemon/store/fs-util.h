// Crash-safe file primitives for the store and the job state: every durable write is
// temp file (".tmp-*" in the same directory) + fsync + rename + fsync of the directory, so a
// reader sees either the old or the new content, never a torn file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/error.h"

namespace nurl {

inline constexpr std::string_view kTempPrefix = ".tmp-";

// Maps errno to a Code and a message naming the operation and path, with a hint for the
// cases people hit (disk full, permissions).
Error errno_error(int err, const std::string& what, const std::filesystem::path& path);

Result<void> make_dirs(const std::filesystem::path& dir);
Result<void> fsync_dir(const std::filesystem::path& dir);
Result<void> fsync_fd(int fd, const std::filesystem::path& path);
// A fresh ".tmp-<pid>-<random>" name in `dir` (the file is not created).
std::filesystem::path temp_path_in(const std::filesystem::path& dir);
// Writes `data` to `path` atomically and durably, with permission bits `mode` (0600 for secrets).
Result<void> write_file_atomic(const std::filesystem::path& path, std::string_view data, unsigned mode = 0644);
// Renames `from` onto `to` (same filesystem) and fsyncs the target directory.
Result<void> rename_durable(const std::filesystem::path& from, const std::filesystem::path& to);
Result<std::string> read_small_file(const std::filesystem::path& path, size_t max_bytes = 1 << 20);
// Full write of a buffer (handles short writes and EINTR).
Result<void> write_all(int fd, const void* data, size_t n, const std::filesystem::path& path);

}  // namespace nurl
