// Bearer tokens: coreutils' sha256sum is the oracle for the stored hash; the file on disk is
// read back as plain JSON (no secret in it, mode 0600); revocation and a second writer (the
// wizard's add_token_to_file) behave as the daemon needs.
#include "auth/token-store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/temp-dir.h"

namespace nurl::auth {
namespace {

using test::TempDir;

std::string sha256sum(const std::string& text) {
  std::string cmd = "printf '%s' '" + text + "' | sha256sum";
  FILE* p = ::popen(cmd.c_str(), "r");
  char buf[128] = {};
  std::string out = p && std::fgets(buf, sizeof buf, p) ? std::string(buf) : "";
  if (p) ::pclose(p);
  return out.substr(0, 64);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Tokens, CreateStoresOnlyTheHashAndVerifies) {
  TempDir dir;
  const std::string path = (dir / "tokens.json").string();
  auto store = TokenStore::open(path);
  ASSERT_TRUE(store.ok()) << store.error().msg;
  EXPECT_TRUE((*store)->empty());
  auto secret = (*store)->create("laptop", Scope::chat);
  ASSERT_TRUE(secret.ok()) << secret.error().msg;
  EXPECT_TRUE(secret->starts_with("nl_"));
  EXPECT_EQ(secret->size(), 3u + 43u);  // 256 bits in base64url
  EXPECT_EQ(secret->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 3),
            std::string::npos);

  const std::string text = slurp(path);
  EXPECT_EQ(text.find(*secret), std::string::npos) << "the secret itself must not be stored";
  EXPECT_EQ(text.find(secret->substr(3, 20)), std::string::npos);
  auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j["tokens"].size(), 1u);
  EXPECT_EQ(j["tokens"][0]["name"], "laptop");
  EXPECT_EQ(j["tokens"][0]["scope"], "chat");
  EXPECT_EQ(j["tokens"][0]["sha256"], sha256sum(*secret));
  EXPECT_EQ(hash_token(*secret), sha256sum(*secret));
  struct stat st{};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto id = (*store)->verify(*secret);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->name, "laptop");
  EXPECT_EQ(id->scope, Scope::chat);
  EXPECT_FALSE((*store)->verify(*secret + "x"));
  EXPECT_FALSE((*store)->verify(secret->substr(0, secret->size() - 1)));
  EXPECT_FALSE((*store)->verify(""));
  EXPECT_FALSE((*store)->verify(sha256sum(*secret)));  // the hash is not the token
}

TEST(Tokens, RevokingOneLeavesTheOthersAndTakesEffectAtOnce) {
  TempDir dir;
  const std::string path = (dir / "tokens.json").string();
  auto store = TokenStore::open(path);
  ASSERT_TRUE(store.ok());
  auto a = (*store)->create("a", Scope::admin);
  auto b = (*store)->create("b", Scope::chat);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ((*store)->create("a", Scope::chat).error().code, Code::already_exists);
  ASSERT_TRUE((*store)->revoke("a").ok());
  EXPECT_FALSE((*store)->verify(*a));
  ASSERT_TRUE((*store)->verify(*b));
  EXPECT_EQ((*store)->verify(*b)->name, "b");
  EXPECT_EQ((*store)->revoke("a").error().code, Code::not_found);
  auto list = (*store)->list();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].name, "b");
  // Another process opening the file sees the same.
  auto again = TokenStore::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE((*again)->verify(*a));
  EXPECT_TRUE((*again)->verify(*b));
}

TEST(Tokens, TheWizardsTokenIsSeenAfterAReload) {
  TempDir dir;
  const std::string path = (dir / "tokens.json").string();
  auto store = TokenStore::open(path);
  ASSERT_TRUE(store.ok());
  auto mine = (*store)->create("daemon-made", Scope::chat);
  auto secret = generate_token();
  ASSERT_TRUE(secret.ok());
  ASSERT_TRUE(add_token_to_file(path, "default", Scope::admin, *secret).ok());
  EXPECT_FALSE((*store)->verify(*secret));  // not until the config reload
  ASSERT_TRUE((*store)->reload().ok());
  ASSERT_TRUE((*store)->verify(*secret));
  EXPECT_EQ((*store)->verify(*secret)->scope, Scope::admin);
  EXPECT_TRUE((*store)->verify(*mine));  // the daemon's own token survived the other writer
  auto dup = add_token_to_file(path, "default", Scope::chat, "another-secret-of-some-length");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Code::already_exists);
}

TEST(Tokens, NamesAndScopesAreChecked) {
  EXPECT_TRUE(validate_token_name("phone-2.home_x").ok());
  for (const char* bad : {"", "a b", "a/b", "ü", "x\n", "../etc"}) EXPECT_FALSE(validate_token_name(bad).ok()) << bad;
  EXPECT_FALSE(validate_token_name(std::string(65, 'a')).ok());
  EXPECT_EQ(*parse_scope("admin"), Scope::admin);
  EXPECT_FALSE(parse_scope("root").ok());
}

TEST(Tokens, ACorruptFileIsAnErrorNotAnEmptyStore) {
  TempDir dir;
  const std::string path = (dir / "tokens.json").string();
  std::ofstream(path) << "{\"tokens\": [{\"name\": \"x\", \"sha256\": \"not-hex\"}]}";
  auto store = TokenStore::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().msg.find("sha256"), std::string::npos) << store.error().msg;
  std::ofstream(path) << "garbage";
  EXPECT_FALSE(TokenStore::open(path).ok());
}

TEST(Tokens, GeneratedTokensDiffer) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(*generate_token());
  EXPECT_EQ(seen.size(), 200u);
}

}  // namespace
}  // namespace nurl::auth
