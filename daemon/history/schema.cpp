#include "history/schema.h"

#include <string>

namespace nurl::history {

const std::vector<std::string_view>& migrations() {
  static const std::vector<std::string_view> steps = {
      // 0 → 1: conversations of a client, their messages.
      R"sql(
        CREATE TABLE conversations (
          id TEXT PRIMARY KEY,             -- 128 random bits, hex
          client TEXT NOT NULL,            -- the nl_client cookie's id
          title TEXT NOT NULL DEFAULT '',
          model TEXT NOT NULL DEFAULT '',
          created_at INTEGER NOT NULL,     -- Unix milliseconds
          updated_at INTEGER NOT NULL
        );
        CREATE INDEX conversations_by_client ON conversations(client, updated_at DESC);
        CREATE TABLE messages (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
          role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
          content TEXT NOT NULL,
          created_at INTEGER NOT NULL
        );
        CREATE INDEX messages_by_conversation ON messages(conversation, id);
      )sql",
      // 1 → 2: a system prompt per conversation; per message the model, options and timings used,
      // the reasoning, and whether the reply is complete.
      R"sql(
        ALTER TABLE conversations ADD COLUMN system TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN model TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN options TEXT NOT NULL DEFAULT '{}';   -- JSON object
        ALTER TABLE messages ADD COLUMN timings TEXT NOT NULL DEFAULT '{}';   -- JSON object
        ALTER TABLE messages ADD COLUMN thinking TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN state TEXT NOT NULL DEFAULT 'complete'
          CHECK (state IN ('complete', 'incomplete', 'error'));
      )sql",
      // 2 → 3: how many earlier messages a reply's prompt left out to fit the context (the page
      // shows it), and the error text of a failed reply.
      R"sql(
        ALTER TABLE messages ADD COLUMN trimmed INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN error TEXT NOT NULL DEFAULT '';
      )sql",
  };
  return steps;
}

Result<int> user_version(Db& db) {
  NURL_ASSIGN(Stmt s, db.prepare("PRAGMA user_version", "reading the schema version"));
  NURL_ASSIGN(bool row, s.step());
  return row ? static_cast<int>(s.int_at(0)) : 0;
}

Result<void> migrate(Db& db, int target) {
  const int latest = schema_version();
  if (target < 0) target = latest;
  NURL_ASSIGN(int v, user_version(db));
  if (v > latest)
    return Error(Code::unsupported, db.path() + " has schema version " + std::to_string(v) + "; this nurllamad knows " +
                                        std::to_string(latest) + " (a newer release wrote it)");
  while (v < target) {
    NURL_ASSIGN(Transaction tx, Transaction::begin(db));
    const std::string what = "migrating " + db.path() + " from schema version " + std::to_string(v);
    NURL_TRY(db.exec(migrations()[static_cast<size_t>(v)], what));
    // PRAGMA takes no parameters; the value is our own integer.
    NURL_TRY(db.exec("PRAGMA user_version = " + std::to_string(v + 1), what));
    NURL_TRY(tx.commit());
    ++v;
  }
  return ok();
}

}  // namespace nurl::history
