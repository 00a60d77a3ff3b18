// The web chat history against SQLite itself as the oracle: schema and pragmas read back with
// the sqlite3 C API on a second connection (what any other SQLite client would see), databases
// of every earlier schema version migrated with their rows intact, ownership enforced in SQL,
// hostile strings stored as data.
#include "history/history.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "history/schema.h"
#include "support/temp-dir.h"

namespace nurl::history {
namespace {

using test::TempDir;

// A plain sqlite3 connection: the oracle.
struct Raw {
  explicit Raw(const std::string& path) { EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK); }
  ~Raw() { sqlite3_close(db); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
  }
  std::vector<std::string> column(const std::string& sql) {
    std::vector<std::string> out;
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    while (s && sqlite3_step(s) == SQLITE_ROW) {
      auto* t = sqlite3_column_text(s, 0);
      out.push_back(t ? reinterpret_cast<const char*>(t) : "NULL");
    }
    sqlite3_finalize(s);
    return out;
  }
  std::string one(const std::string& sql) {
    auto c = column(sql);
    return c.empty() ? "" : c[0];
  }
  sqlite3* db = nullptr;
};

Message msg(const std::string& role, const std::string& content) {
  Message m;
  m.role = role;
  m.content = content;
  return m;
}

std::set<std::string> columns_of(Raw& r, const std::string& table) {
  auto c = r.column("SELECT name FROM pragma_table_info('" + table + "')");
  return {c.begin(), c.end()};
}

TEST(History, OpensWithWalForeignKeysAndTheCurrentSchema) {
  TempDir dir;
  const std::string path = (dir / "history.db").string();
  auto h = History::open(path);
  ASSERT_TRUE(h.ok()) << h.error().msg;
  Raw raw(path);
  EXPECT_EQ(raw.one("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw.one("PRAGMA user_version"), std::to_string(schema_version()));
  EXPECT_EQ(columns_of(raw, "messages"),
            (std::set<std::string>{"id", "conversation", "role", "content", "created_at", "model", "options", "timings",
                                   "thinking", "state", "trimmed", "error"}));
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Foreign keys are enforced on our connection: deleting a conversation takes its messages.
  auto c = (*h)->create_conversation("client-a", "t", "m", "");
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*h)->add_message("client-a", c->id, msg("user", "hi")).ok());
  ASSERT_TRUE((*h)->delete_conversation("client-a", c->id).ok());
  EXPECT_EQ(raw.one("SELECT count(*) FROM messages"), "0");
}

// A database written by each earlier release: built with that release's migrations and filled
// with the rows that release could write; opening it migrates to the current schema and keeps
// every row.
TEST(History, MigratesFromEveryEarlierVersion) {
  for (int v = 0; v < schema_version(); ++v) {
    SCOPED_TRACE("from schema version " + std::to_string(v));
    TempDir dir;
    const std::string path = (dir / "history.db").string();
    {
      auto db = Db::open(path);
      ASSERT_TRUE(db.ok());
      ASSERT_TRUE(migrate(**db, v).ok());
    }
    {
      Raw raw(path);
      EXPECT_EQ(raw.one("PRAGMA user_version"), std::to_string(v));
      if (v >= 1) {
        raw.exec("INSERT INTO conversations (id, client, title, model, created_at, updated_at) "
                 "VALUES ('c1', 'alice', 'old chat', 'qwen2', 1000, 2000)");
        raw.exec("INSERT INTO messages (conversation, role, content, created_at) VALUES ('c1', 'user', 'hello', 1500)");
        raw.exec("INSERT INTO messages (conversation, role, content, created_at) VALUES ('c1', 'assistant', 'hi!', 1600)");
      }
      if (v >= 2) {
        raw.exec("UPDATE conversations SET system = 'be brief' WHERE id = 'c1'");
        raw.exec("UPDATE messages SET state = 'incomplete', model = 'qwen2' WHERE role = 'assistant'");
      }
    }
    auto h = History::open(path);
    ASSERT_TRUE(h.ok()) << h.error().msg;
    Raw raw(path);
    EXPECT_EQ(raw.one("PRAGMA user_version"), std::to_string(schema_version()));
    EXPECT_TRUE(columns_of(raw, "messages").count("trimmed"));
    if (v == 0) {
      EXPECT_TRUE((*h)->list_conversations("alice")->empty());
      continue;
    }
    auto list = (*h)->list_conversations("alice");
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->size(), 1u);
    EXPECT_EQ((*list)[0].title, "old chat");
    EXPECT_EQ((*list)[0].system, v >= 2 ? "be brief" : "");
    auto msgs = (*h)->messages("alice", "c1");
    ASSERT_TRUE(msgs.ok());
    ASSERT_EQ(msgs->size(), 2u);
    EXPECT_EQ((*msgs)[0].content, "hello");
    EXPECT_EQ((*msgs)[1].content, "hi!");
    EXPECT_EQ((*msgs)[1].state, v >= 2 ? "incomplete" : "complete");
    EXPECT_EQ((*msgs)[1].trimmed, 0);
    EXPECT_EQ((*msgs)[1].options, "{}");
    // The migrated database takes new rows of the current schema.
    Message m = msg("user", "again");
    m.trimmed = 3;
    ASSERT_TRUE((*h)->add_message("alice", "c1", m).ok());
    EXPECT_EQ(raw.one("SELECT trimmed FROM messages WHERE content = 'again'"), "3");
  }
}

TEST(History, RefusesADatabaseFromANewerRelease) {
  TempDir dir;
  const std::string path = (dir / "history.db").string();
  {
    Raw raw(path);
    raw.exec("PRAGMA user_version = " + std::to_string(schema_version() + 1));
  }
  auto h = History::open(path);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().msg.find("newer release"), std::string::npos) << h.error().msg;
}

TEST(History, AnotherClientsConversationDoesNotExist) {
  TempDir dir;
  auto h = History::open((dir / "history.db").string());
  ASSERT_TRUE(h.ok());
  auto& hist = **h;
  auto a = hist.create_conversation("alice", "secret plans", "m", "");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(hist.add_message("alice", a->id, msg("user", "the plans")).ok());

  EXPECT_EQ(hist.get_conversation("bob", a->id).error().code, Code::not_found);
  EXPECT_EQ(hist.messages("bob", a->id).error().code, Code::not_found);
  EXPECT_EQ(hist.add_message("bob", a->id, msg("user", "x")).error().code, Code::not_found);
  ConversationPatch p;
  p.title = "pwned";
  EXPECT_EQ(hist.update_conversation("bob", a->id, p).error().code, Code::not_found);
  EXPECT_EQ(hist.delete_conversation("bob", a->id).error().code, Code::not_found);
  Message reply = msg("assistant", "x");
  reply.id = 1;
  EXPECT_EQ(hist.update_reply("bob", a->id, reply).error().code, Code::not_found);
  ASSERT_TRUE(hist.truncate_from("bob", a->id, 0).ok());  // deletes nothing of alice's
  EXPECT_TRUE(hist.list_conversations("bob")->empty());
  // Alice's data is untouched, with the same error text as a missing conversation for Bob.
  EXPECT_EQ(hist.get_conversation("alice", a->id)->title, "secret plans");
  EXPECT_EQ(hist.messages("alice", a->id)->size(), 1u);
  EXPECT_EQ(hist.get_conversation("bob", a->id).error().msg, hist.get_conversation("bob", "no-such-id").error().msg);
}

TEST(History, HostileStringsAreStoredAsData) {
  TempDir dir;
  const std::string path = (dir / "history.db").string();
  auto h = History::open(path);
  ASSERT_TRUE(h.ok());
  auto& hist = **h;
  const std::vector<std::string> evil = {
      "'); DROP TABLE conversations; --", "\" OR 1=1 --", "x' OR client LIKE '%", "%", "_", "\\",
      std::string("nul\0byte", 8), "<script>alert(1)</script>", "😀 ünïcödé"};
  for (const auto& s : evil) {
    auto c = hist.create_conversation("alice", s, s, s);
    ASSERT_TRUE(c.ok()) << c.error().msg;
    ASSERT_TRUE(hist.add_message("alice", c->id, msg("user", s)).ok());
    auto back = hist.get_conversation("alice", c->id);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(back->title, s);
    EXPECT_EQ(back->system, s);
    EXPECT_EQ((*hist.messages("alice", c->id))[0].content, s);
  }
  ASSERT_TRUE(hist.create_conversation("bob", "bob's", "m", "").ok());
  // Search treats % _ \ as characters, and a quote never widens the search to other clients.
  auto containing = [&](const std::string& part) {
    return static_cast<size_t>(std::count_if(evil.begin(), evil.end(), [&](const auto& e) { return e.find(part) != std::string::npos; }));
  };
  EXPECT_EQ(hist.list_conversations("alice", "%")->size(), containing("%"));
  EXPECT_EQ(hist.list_conversations("alice", "_")->size(), containing("_"));
  EXPECT_EQ(hist.list_conversations("alice", "\\")->size(), containing("\\"));
  EXPECT_EQ(hist.list_conversations("alice", "' OR '1'='1")->size(), 0u);
  EXPECT_EQ(hist.list_conversations("alice")->size(), evil.size());
  EXPECT_EQ(hist.list_conversations("' OR '1'='1")->size(), 0u);
  Raw raw(path);
  EXPECT_EQ(raw.one("SELECT count(*) FROM conversations"), std::to_string(evil.size() + 1));
}

TEST(History, ListIsNewestFirstAndSearchesTitles) {
  TempDir dir;
  auto h = History::open((dir / "history.db").string());
  ASSERT_TRUE(h.ok());
  auto& hist = **h;
  auto first = hist.create_conversation("c", "Cooking pasta", "m", "");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto second = hist.create_conversation("c", "Rust lifetimes", "m", "");
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto list = hist.list_conversations("c");
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, second->id);
  // A new message moves a conversation to the top.
  ASSERT_TRUE(hist.add_message("c", first->id, msg("user", "more")).ok());
  list = hist.list_conversations("c");
  EXPECT_EQ((*list)[0].id, first->id);
  auto found = hist.list_conversations("c", "PASTA");
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].id, first->id);
}

TEST(History, RepliesGrowAndRegenerateDropsTheTail) {
  TempDir dir;
  auto h = History::open((dir / "history.db").string());
  ASSERT_TRUE(h.ok());
  auto& hist = **h;
  auto c = hist.create_conversation("c", "", "m", "");
  auto u = hist.add_message("c", c->id, msg("user", "q"));
  Message r = msg("assistant", "");
  r.state = "incomplete";
  r.options = R"({"temperature":0})";
  auto rid = hist.add_message("c", c->id, r);
  ASSERT_TRUE(rid.ok());
  r.id = *rid;
  r.content = "partial";
  ASSERT_TRUE(hist.update_reply("c", c->id, r).ok());
  EXPECT_EQ((*hist.messages("c", c->id))[1].content, "partial");
  EXPECT_EQ((*hist.messages("c", c->id))[1].state, "incomplete");
  r.content = "partial and done";
  r.state = "complete";
  r.timings = R"({"eval_count":3})";
  ASSERT_TRUE(hist.update_reply("c", c->id, r).ok());
  auto m = (*hist.messages("c", c->id))[1];
  EXPECT_EQ(m.state, "complete");
  EXPECT_EQ(m.timings, R"({"eval_count":3})");
  EXPECT_EQ(m.options, R"({"temperature":0})");
  ASSERT_TRUE(hist.truncate_from("c", c->id, *rid).ok());
  auto left = hist.messages("c", c->id);
  ASSERT_EQ(left->size(), 1u);
  EXPECT_EQ((*left)[0].id, *u);
  // An invalid state is refused by the schema, not stored.
  Message bad = msg("assistant", "x");
  bad.state = "weird";
  EXPECT_FALSE(hist.add_message("c", c->id, bad).ok());
}

TEST(History, WaitsForAnotherWriterInsteadOfFailing) {
  TempDir dir;
  const std::string path = (dir / "history.db").string();
  auto h = History::open(path);
  ASSERT_TRUE(h.ok());
  auto c = (*h)->create_conversation("c", "", "m", "");
  Raw other(path);
  other.exec("BEGIN IMMEDIATE");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    other.exec("COMMIT");
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = (*h)->add_message("c", c->id, msg("user", "waited"));
  release.join();
  EXPECT_TRUE(r.ok()) << r.error().msg;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
}

TEST(History, RandomIdsAre128BitsOfHex) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto id = random_id();
    ASSERT_TRUE(id.ok());
    ASSERT_EQ(id->size(), 32u);
    ASSERT_EQ(id->find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(*id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

}  // namespace
}  // namespace nurl::history
