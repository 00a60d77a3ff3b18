#include "history/history.h"

#include <sys/random.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "history/schema.h"

namespace nurl::history {

namespace {

constexpr const char* kConversationColumns = "id, title, model, system, created_at, updated_at";
constexpr const char* kMessageColumns =
    "m.id, m.role, m.content, m.thinking, m.model, m.options, m.timings, m.state, m.error, m.trimmed, m.created_at";

Conversation conversation_at(const Stmt& s) {
  Conversation c;
  c.id = s.text_at(0);
  c.title = s.text_at(1);
  c.model = s.text_at(2);
  c.system = s.text_at(3);
  c.created_at = s.int_at(4);
  c.updated_at = s.int_at(5);
  return c;
}

Message message_at(const Stmt& s) {
  Message m;
  m.id = s.int_at(0);
  m.role = s.text_at(1);
  m.content = s.text_at(2);
  m.thinking = s.text_at(3);
  m.model = s.text_at(4);
  m.options = s.text_at(5);
  m.timings = s.text_at(6);
  m.state = s.text_at(7);
  m.error = s.text_at(8);
  m.trimmed = static_cast<int>(s.int_at(9));
  m.created_at = s.int_at(10);
  return m;
}

Error no_conversation() { return Error(Code::not_found, "conversation not found"); }

// A LIKE pattern matching `text` anywhere, with the wildcards in it escaped.
std::string like_pattern(const std::string& text) {
  std::string p = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') p += '\\';
    p += c;
  }
  return p + "%";
}

}  // namespace

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<std::string> random_id() {
  unsigned char b[16];
  size_t got = 0;
  while (got < sizeof b) {
    ssize_t n = ::getrandom(b + got, sizeof b - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error(Code::internal, std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

Result<std::unique_ptr<History>> History::open(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  NURL_ASSIGN(auto db, Db::open(path));
  // WAL: readers never block the writer and a killed process loses nothing committed.
  NURL_ASSIGN(Stmt wal, db->prepare("PRAGMA journal_mode = WAL", "enabling WAL on " + path));
  NURL_TRY(wal.run());
  NURL_TRY(db->exec("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;", "configuring " + path));
  NURL_TRY(migrate(*db));
  std::filesystem::permissions(p, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace, ec);
  return std::unique_ptr<History>(new History(std::move(db)));
}

Result<Conversation> History::create_conversation(const std::string& client, const std::string& title,
                                                  const std::string& model, const std::string& system) {
  NURL_ASSIGN(std::string id, random_id());
  const int64_t now = now_ms();
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Stmt s, db_->prepare("INSERT INTO conversations (id, client, title, model, system, created_at, updated_at) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                                   "creating a conversation"));
  s.bind(1, id).bind(2, client).bind(3, title).bind(4, model).bind(5, system).bind(6, now).bind(7, now);
  NURL_TRY(s.run());
  return Conversation{id, title, model, system, now, now};
}

Result<std::vector<Conversation>> History::list_conversations(const std::string& client, const std::string& search,
                                                              int limit) {
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Stmt s, db_->prepare(std::string("SELECT ") + kConversationColumns +
                                       " FROM conversations WHERE client = ? AND title LIKE ? ESCAPE '\\' "
                                       "ORDER BY updated_at DESC, created_at DESC, id LIMIT ?",
                                   "listing conversations"));
  s.bind(1, client).bind(2, like_pattern(search)).bind(3, static_cast<int64_t>(limit));
  std::vector<Conversation> out;
  while (true) {
    NURL_ASSIGN(bool row, s.step());
    if (!row) break;
    out.push_back(conversation_at(s));
  }
  return out;
}

Result<Conversation> History::get_locked(const std::string& client, const std::string& id) {
  NURL_ASSIGN(Stmt s, db_->prepare(std::string("SELECT ") + kConversationColumns +
                                       " FROM conversations WHERE id = ? AND client = ?",
                                   "reading a conversation"));
  s.bind(1, id).bind(2, client);
  NURL_ASSIGN(bool row, s.step());
  if (!row) return no_conversation();
  return conversation_at(s);
}

Result<Conversation> History::get_conversation(const std::string& client, const std::string& id) {
  std::lock_guard lk(mu_);
  return get_locked(client, id);
}

Result<Conversation> History::update_conversation(const std::string& client, const std::string& id,
                                                  const ConversationPatch& patch) {
  std::lock_guard lk(mu_);
  // COALESCE keeps a column whose new value is NULL (not in the patch).
  NURL_ASSIGN(Stmt s, db_->prepare("UPDATE conversations SET title = COALESCE(?, title), system = COALESCE(?, system), "
                                   "model = COALESCE(?, model), updated_at = ? WHERE id = ? AND client = ?",
                                   "updating a conversation"));
  int i = 1;
  for (const auto* v : {&patch.title, &patch.system, &patch.model}) {
    if (*v) s.bind(i, **v);
    else s.bind_null(i);
    ++i;
  }
  s.bind(4, now_ms()).bind(5, id).bind(6, client);
  NURL_TRY(s.run());
  if (db_->changes() == 0) return no_conversation();
  return get_locked(client, id);
}

Result<void> History::delete_conversation(const std::string& client, const std::string& id) {
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Stmt s, db_->prepare("DELETE FROM conversations WHERE id = ? AND client = ?", "deleting a conversation"));
  s.bind(1, id).bind(2, client);
  NURL_TRY(s.run());  // the messages go with it (ON DELETE CASCADE)
  if (db_->changes() == 0) return no_conversation();
  return ok();
}

Result<std::vector<Message>> History::messages(const std::string& client, const std::string& conversation) {
  std::lock_guard lk(mu_);
  NURL_TRY(get_locked(client, conversation));
  NURL_ASSIGN(Stmt s, db_->prepare(std::string("SELECT ") + kMessageColumns +
                                       " FROM messages m JOIN conversations c ON m.conversation = c.id "
                                       "WHERE c.id = ? AND c.client = ? ORDER BY m.id",
                                   "reading messages"));
  s.bind(1, conversation).bind(2, client);
  std::vector<Message> out;
  while (true) {
    NURL_ASSIGN(bool row, s.step());
    if (!row) break;
    out.push_back(message_at(s));
  }
  return out;
}

Result<int64_t> History::add_message(const std::string& client, const std::string& conversation, const Message& m) {
  const int64_t now = m.created_at ? m.created_at : now_ms();
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Transaction tx, Transaction::begin(*db_));
  // The conversation row is the owner check: no row for (id, client), nothing inserted.
  NURL_ASSIGN(Stmt s, db_->prepare("INSERT INTO messages (conversation, role, content, thinking, model, options, timings, "
                                   "state, error, trimmed, created_at) "
                                   "SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM conversations WHERE id = ? AND client = ?",
                                   "adding a message"));
  s.bind(1, m.role).bind(2, m.content).bind(3, m.thinking).bind(4, m.model).bind(5, m.options).bind(6, m.timings);
  s.bind(7, m.state).bind(8, m.error).bind(9, static_cast<int64_t>(m.trimmed)).bind(10, now);
  s.bind(11, conversation).bind(12, client);
  NURL_TRY(s.run());
  if (db_->changes() == 0) return no_conversation();
  const int64_t id = db_->last_insert_id();
  NURL_ASSIGN(Stmt t, db_->prepare("UPDATE conversations SET updated_at = ? WHERE id = ? AND client = ?",
                                   "touching a conversation"));
  t.bind(1, now).bind(2, conversation).bind(3, client);
  NURL_TRY(t.run());
  NURL_TRY(tx.commit());
  return id;
}

Result<void> History::update_reply(const std::string& client, const std::string& conversation, const Message& m) {
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Stmt s, db_->prepare("UPDATE messages SET content = ?, thinking = ?, state = ?, error = ?, timings = ?, "
                                   "trimmed = ? WHERE id = ? AND conversation IN "
                                   "(SELECT id FROM conversations WHERE id = ? AND client = ?)",
                                   "saving a reply"));
  s.bind(1, m.content).bind(2, m.thinking).bind(3, m.state).bind(4, m.error).bind(5, m.timings);
  s.bind(6, static_cast<int64_t>(m.trimmed)).bind(7, m.id).bind(8, conversation).bind(9, client);
  NURL_TRY(s.run());
  if (db_->changes() == 0) return Error(Code::not_found, "message not found");
  return ok();
}

Result<void> History::truncate_from(const std::string& client, const std::string& conversation, int64_t id) {
  std::lock_guard lk(mu_);
  NURL_ASSIGN(Stmt s, db_->prepare("DELETE FROM messages WHERE id >= ? AND conversation IN "
                                   "(SELECT id FROM conversations WHERE id = ? AND client = ?)",
                                   "deleting messages"));
  s.bind(1, id).bind(2, conversation).bind(3, client);
  NURL_TRY(s.run());
  return ok();
}

}  // namespace nurl::history
