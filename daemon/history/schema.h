// The history database's schema, versioned by `PRAGMA user_version`. migrations()[i] takes a
// database from version i to i + 1; migrate() runs the missing steps at open, each in its own
// transaction, so a database from any earlier release opens (and a newer one is refused).
// Never edit a released step: add a new one.
#pragma once

#include <string_view>
#include <vector>

#include "history/sqlite.h"

namespace nurl::history {

const std::vector<std::string_view>& migrations();
inline int schema_version() { return static_cast<int>(migrations().size()); }

Result<int> user_version(Db& db);
// Brings `db` to `target` (default: the current version); refuses a database newer than this
// build knows.
Result<void> migrate(Db& db, int target = -1);

}  // namespace nurl::history
