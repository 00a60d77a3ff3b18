// The web chat's history: conversations and their messages in SQLite at
// <state>/history.db (WAL, busy_timeout, foreign keys, the schema in schema.cpp migrated at
// open). Every call names the client (the nl_client cookie's id) and every statement checks it
// in SQL (`WHERE id = ? AND client = ?`): another client's conversation is not_found, exactly
// like one that never existed. All values are bound parameters.
//
// One connection, used under a mutex from the I/O threads; statements are short (one row or one
// conversation), so nothing waits long.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "history/sqlite.h"

namespace nurl::history {

struct Conversation {
  std::string id;
  std::string title;
  std::string model;
  std::string system;  // the system prompt ("" = the model's default)
  int64_t created_at = 0;  // Unix milliseconds
  int64_t updated_at = 0;
};

struct Message {
  int64_t id = 0;
  std::string role;           // system, user, assistant
  std::string content;
  std::string thinking;       // the reasoning, when the model returned it
  std::string model;          // assistant: the model that wrote it
  std::string options = "{}"; // JSON object: the options used
  std::string timings = "{}"; // JSON object: durations and counts
  std::string state = "complete";  // complete, incomplete (stopped, cut off), error
  std::string error;          // state error: what went wrong
  int trimmed = 0;            // earlier messages left out of this reply's prompt
  int64_t created_at = 0;
};

struct ConversationPatch {
  std::optional<std::string> title, system, model;
};

class History {
 public:
  static Result<std::unique_ptr<History>> open(const std::string& path);

  Result<Conversation> create_conversation(const std::string& client, const std::string& title,
                                           const std::string& model, const std::string& system);
  // Newest first; `search` matches titles (case-insensitive substring), "" = all.
  Result<std::vector<Conversation>> list_conversations(const std::string& client, const std::string& search = "",
                                                       int limit = 200);
  Result<Conversation> get_conversation(const std::string& client, const std::string& id);
  Result<Conversation> update_conversation(const std::string& client, const std::string& id,
                                           const ConversationPatch& patch);
  Result<void> delete_conversation(const std::string& client, const std::string& id);

  Result<std::vector<Message>> messages(const std::string& client, const std::string& conversation);
  // Appends and returns the message's id (created_at 0: now); bumps the conversation's updated_at.
  Result<int64_t> add_message(const std::string& client, const std::string& conversation, const Message& m);
  // A reply as it grows: content, thinking, state, error and timings (by message id).
  Result<void> update_reply(const std::string& client, const std::string& conversation, const Message& m);
  // Deletes message `id` and every later one (regenerate drops the last reply).
  Result<void> truncate_from(const std::string& client, const std::string& conversation, int64_t id);

 private:
  explicit History(std::unique_ptr<Db> db) : db_(std::move(db)) {}
  Result<Conversation> get_locked(const std::string& client, const std::string& id);

  std::mutex mu_;
  std::unique_ptr<Db> db_;
};

// 128 bits from the OS CSPRNG as 32 hex digits (conversation and client ids).
Result<std::string> random_id();
int64_t now_ms();

}  // namespace nurl::history
