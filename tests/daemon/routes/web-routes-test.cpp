// Every /web/* route through the real pipeline and router, with a real history database and the
// fake model: cookies (missing, forged, Secure behind a trusted proxy), ownership (another
// client's ids are 404 like missing ones), hostile strings, 413, CSRF, streaming persistence
// (complete, stopped → incomplete, errors), regenerate, trimming, the per-user limit, export,
// SSE framing, and the page itself (CSP, ETag, 304, asset caching).
#include <regex>
#include <thread>

#include "history/history.h"
#include "route-harness.h"
#include "support/temp-dir.h"
#include "web/assets.h"

namespace nurl {
namespace {

using Json = nlohmann::json;
using Headers = std::map<std::string, std::string>;

class WebRoutes : public test::RouteHarness {
 protected:
  void configure(Config& c) override {
    c.web_max_message = 2048;
    c.user_max_generations = max_generations_;
    c.context_length = context_length_;
    c.trusted_proxies = {"10.9.9.9"};
  }
  void add_services(RouteContext& ctx) override {
    auto h = history::History::open((dir_ / "history.db").string());
    ASSERT_TRUE(h.ok()) << h.error().msg;
    history_ = std::move(*h);
    ctx.history = history_.get();
  }

  // A browser: its cookie, JSON, our Origin.
  struct Client {
    std::string cookie;  // "nl_client=…"
  };
  Client new_client() {
    auto r = call("GET", "/web/session", "");
    EXPECT_EQ(r.status, 200);
    std::string sc = r.header("Set-Cookie");
    return Client{sc.substr(0, sc.find(';'))};
  }
  test::RouteReply web(const Client& c, const std::string& method, const std::string& path, const Json& body = nullptr,
                       Headers extra = {}, int stop_after = -1) {
    Headers h{{"cookie", c.cookie}, {"origin", "http://127.0.0.1:11434"}, {"content-type", "application/json"}};
    for (auto& [k, v] : extra) h[k] = v;
    return call(method, path, body.is_null() ? "" : body.dump(), h, stop_after);
  }
  std::string create(const Client& c, const std::string& title = "") {
    auto r = web(c, "POST", "/web/conversations", {{"title", title}, {"model", model_path_}});
    EXPECT_EQ(r.status, 201) << r.body();
    return Json::parse(r.body())["id"];
  }
  Json messages(const Client& c, const std::string& id) {
    auto r = web(c, "GET", "/web/conversations/" + id + "/messages");
    EXPECT_EQ(r.status, 200) << r.body();
    return Json::parse(r.body())["messages"];
  }
  // The stream's lines as JSON.
  static std::vector<Json> lines(const test::RouteReply& r) {
    std::vector<Json> out;
    std::string body = r.body();
    size_t i = 0;
    while (i < body.size()) {
      size_t nl = body.find('\n', i);
      std::string line = body.substr(i, nl - i);
      if (line.starts_with("data: ")) line = line.substr(6);
      if (!line.empty()) out.push_back(Json::parse(line));
      i = nl == std::string::npos ? body.size() : nl + 1;
    }
    return out;
  }
  static std::string text_of(const std::vector<Json>& ls) {
    std::string t;
    for (const auto& l : ls)
      if (l["type"] == "text") t += l["text"].get<std::string>();
    return t;
  }

  test::TempDir dir_;
  std::unique_ptr<history::History> history_;
  int max_generations_ = 4;
  int context_length_ = 512;
};

TEST_F(WebRoutes, TheSessionMintsAStrictCookieOnce) {
  auto r = call("GET", "/web/session", "");
  ASSERT_EQ(r.status, 200);
  const std::string sc = r.header("Set-Cookie");
  EXPECT_TRUE(std::regex_search(sc, std::regex("^nl_client=[0-9a-f]{32}; Path=/; Max-Age=\\d+; HttpOnly; SameSite=Lax$")))
      << sc;
  auto j = Json::parse(r.body());
  EXPECT_EQ(j["access"], "open");
  EXPECT_FALSE(j.contains("client")) << "the id stays in the HttpOnly cookie";
  auto again = call("GET", "/web/session", "", {{"cookie", "theme=dark; " + sc.substr(0, sc.find(';'))}});
  EXPECT_EQ(again.header("Set-Cookie"), "");
  // Behind a trusted proxy that says the browser used TLS, the cookie is Secure.
  auto untrusted = call("GET", "/web/session", "", {{"x-forwarded-proto", "https"}});
  EXPECT_FALSE(untrusted.header("Set-Cookie").ends_with("; Secure"));  // anyone can send that header
  peer_address_ = "10.9.9.9:5000";
  auto behind = call("GET", "/web/session", "", {{"x-forwarded-proto", "https"}});
  EXPECT_TRUE(behind.header("Set-Cookie").ends_with("; Secure")) << behind.header("Set-Cookie");
  auto plain = call("GET", "/web/session", "");
  EXPECT_FALSE(plain.header("Set-Cookie").ends_with("; Secure"));
}

TEST_F(WebRoutes, ForgedOrMalformedCookiesGetAFreshEmptyIdentity) {
  auto alice = new_client();
  create(alice, "alice's");
  for (const char* forged : {"nl_client=", "nl_client=../../etc/passwd", "nl_client=ABCDEF0123456789ABCDEF0123456789",
                             "nl_client=0123456789abcdef0123456789abcde", "nl_client=' OR 1=1 --",
                             "nl_client=0123456789abcdef0123456789abcdef0"}) {
    auto r = call("GET", "/web/conversations", "", {{"cookie", forged}});
    ASSERT_EQ(r.status, 200) << forged;
    EXPECT_TRUE(Json::parse(r.body())["conversations"].empty()) << forged;
    EXPECT_NE(r.header("Set-Cookie"), "") << forged;
  }
  // A well-formed id nobody was given sees nothing either.
  auto r = call("GET", "/web/conversations", "", {{"cookie", "nl_client=0123456789abcdef0123456789abcdef"}});
  EXPECT_TRUE(Json::parse(r.body())["conversations"].empty());
  EXPECT_EQ(r.header("Set-Cookie"), "");
}

TEST_F(WebRoutes, ConversationsAreCreatedListedRenamedAndDeleted) {
  auto c = new_client();
  const std::string a = create(c, "first");
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  const std::string b = create(c, "second");
  auto list = Json::parse(web(c, "GET", "/web/conversations").body())["conversations"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], b);  // newest first
  auto p = web(c, "PATCH", "/web/conversations/" + a, {{"title", "renamed"}, {"system", "Be terse."}});
  ASSERT_EQ(p.status, 200) << p.body();
  EXPECT_EQ(Json::parse(p.body())["title"], "renamed");
  EXPECT_EQ(Json::parse(p.body())["system"], "Be terse.");
  auto found = Json::parse(web(c, "GET", "/web/conversations?q=RENAM").body())["conversations"];
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]["id"], a);
  EXPECT_EQ(web(c, "PATCH", "/web/conversations/" + a, {{"title", 5}}).status, 400);
  EXPECT_EQ(web(c, "DELETE", "/web/conversations/" + a).status, 200);
  EXPECT_EQ(web(c, "GET", "/web/conversations/" + a + "/messages").status, 404);
  EXPECT_EQ(web(c, "DELETE", "/web/conversations/" + a).status, 404);
}

TEST_F(WebRoutes, AnotherClientsIdsAreNotFoundLikeMissingOnes) {
  auto alice = new_client(), mallory = new_client();
  const std::string id = create(alice, "alice's secret");
  ASSERT_EQ(web(alice, "POST", "/web/chat", {{"conversation", id}, {"content", "hello"}}).status, 200);
  const std::string missing = "0123456789abcdef0123456789abcdef";
  struct Probe {
    const char* method;
    std::string path;
    Json body;
  };
  for (const auto& target : {id, missing}) {
    for (const auto& p : std::vector<Probe>{{"GET", "/web/conversations/" + target + "/messages", nullptr},
                                           {"PATCH", "/web/conversations/" + target, {{"title", "mine now"}}},
                                           {"DELETE", "/web/conversations/" + target, nullptr},
                                           {"GET", "/web/conversations/" + target + "/export?format=json", nullptr},
                                           {"POST", "/web/chat", {{"conversation", target}, {"content", "leak?"}}}}) {
      auto r = web(mallory, p.method, p.path, p.body);
      EXPECT_EQ(r.status, 404) << p.method << " " << p.path;
      EXPECT_EQ(r.body(), R"({"error":"conversation not found"})") << p.method << " " << p.path;
    }
  }
  EXPECT_TRUE(Json::parse(web(mallory, "GET", "/web/conversations").body())["conversations"].empty());
  auto mine = messages(alice, id);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0]["content"], "hello");
  EXPECT_EQ(Json::parse(web(alice, "GET", "/web/conversations").body())["conversations"][0]["title"], "alice's secret");
}

TEST_F(WebRoutes, SqlInjectionStringsAreJustText) {
  auto c = new_client(), other = new_client();
  create(other, "other's");
  const std::vector<std::string> evil = {"'; DROP TABLE messages; --", "\" OR \"1\"=\"1", "%' OR client LIKE '%",
                                         "Robert'); DELETE FROM conversations WHERE ('1'='1"};
  for (const auto& s : evil) {
    const std::string id = create(c, s);
    auto r = web(c, "POST", "/web/chat", {{"conversation", id}, {"content", s}});
    ASSERT_EQ(r.status, 200) << r.body();
    auto m = messages(c, id);
    ASSERT_EQ(m.size(), 2u);
    EXPECT_EQ(m[0]["content"], s);
    auto list = Json::parse(web(c, "GET", "/web/conversations?q=" + s).body())["conversations"];
    EXPECT_LE(list.size(), 1u) << s;
  }
  EXPECT_EQ(Json::parse(web(c, "GET", "/web/conversations").body())["conversations"].size(), evil.size());
  EXPECT_EQ(Json::parse(web(other, "GET", "/web/conversations").body())["conversations"].size(), 1u);
}

TEST_F(WebRoutes, OversizedMessagesAre413) {
  auto c = new_client();
  const std::string id = create(c);
  auto r = web(c, "POST", "/web/chat", {{"conversation", id}, {"content", std::string(4096, 'x')}});
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body().find("2048"), std::string::npos) << r.body();
  EXPECT_EQ(web(c, "PATCH", "/web/conversations/" + id, {{"system", std::string(4096, 's')}}).status, 413);
  EXPECT_TRUE(messages(c, id).empty()) << "a refused message is not stored";
}

TEST_F(WebRoutes, CrossSiteMutationsAre403) {
  auto c = new_client();
  const std::string id = create(c);
  EXPECT_EQ(web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "x"}}, {{"origin", "https://evil.example"}}).status,
            403);
  EXPECT_EQ(web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "x"}}, {{"content-type", "text/plain"}}).status,
            403);
  EXPECT_EQ(web(c, "DELETE", "/web/conversations/" + id, nullptr, {{"origin", "http://localhost:3000"}}).status, 403);
  EXPECT_EQ(call("POST", "/web/conversations", "{}", {{"cookie", c.cookie}, {"content-type", "application/json"}}).status,
            403);  // no Origin at all
  EXPECT_TRUE(messages(c, id).empty());
}

TEST_F(WebRoutes, AReplyStreamsAndIsSavedWithModelOptionsAndTimings) {
  auto c = new_client();
  const std::string id = create(c);
  auto r = web(c, "POST", "/web/chat",
               {{"conversation", id}, {"content", "Hi there\nsecond line"}, {"options", {{"num_predict", 8}}}});
  ASSERT_EQ(r.status, 200) << r.body();
  EXPECT_EQ(r.content_type, "application/x-ndjson");
  auto ls = lines(r);
  ASSERT_GE(ls.size(), 2u);
  EXPECT_EQ(ls[0]["type"], "text");
  EXPECT_TRUE(ls[0].contains("message_id"));
  EXPECT_EQ(ls[0]["trimmed"], 0);
  EXPECT_EQ(ls.back()["type"], "done");
  const std::string text = text_of(ls);
  EXPECT_EQ(text.size(), 8u);  // the fake model writes one letter per token
  auto saved = ls.back()["message"];
  EXPECT_EQ(saved["content"], text);
  EXPECT_EQ(saved["state"], "complete");
  EXPECT_EQ(saved["timings"]["eval_count"], 8);
  EXPECT_EQ(saved["timings"]["done_reason"], "length");
  auto m = messages(c, id);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0]["role"], "user");
  EXPECT_EQ(m[1]["role"], "assistant");
  EXPECT_EQ(m[1]["content"], text);
  EXPECT_EQ(m[1]["model"], model_path_);
  EXPECT_EQ(m[1]["options"]["num_predict"], 8);
  // The first line of the first message became the title.
  EXPECT_EQ(Json::parse(web(c, "GET", "/web/conversations").body())["conversations"][0]["title"], "Hi there");
}

TEST_F(WebRoutes, StoppingKeepsThePartialReplyMarkedIncomplete) {
  step_delay_ = std::chrono::milliseconds(5);
  auto c = new_client();
  const std::string id = create(c);
  auto r = web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "tell me a long story"}}, {}, 4);
  ASSERT_EQ(r.status, 200);
  const std::string seen = text_of(lines(r));
  ASSERT_EQ(seen.size(), 4u);
  auto m = messages(c, id);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1]["state"], "incomplete");
  EXPECT_EQ(m[1]["content"], seen);
  // The slot is free again: the next reply runs.
  auto next = web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "again"}, {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(lines(next).back()["type"], "done");
}

TEST_F(WebRoutes, RegenerateReplacesTheLastReply) {
  auto c = new_client();
  const std::string id = create(c);
  ASSERT_EQ(web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "q"}, {"options", {{"num_predict", 3}}}}).status,
            200);
  auto before = messages(c, id);
  auto r = web(c, "POST", "/web/chat", {{"conversation", id}, {"regenerate", true}, {"options", {{"num_predict", 3}}}});
  ASSERT_EQ(r.status, 200) << r.body();
  auto after = messages(c, id);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0]["id"], before[0]["id"]);
  EXPECT_NE(after[1]["id"], before[1]["id"]);
  EXPECT_EQ(after[1]["content"], before[1]["content"]);  // same history, same (deterministic) answer
  EXPECT_EQ(web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "x"}, {"regenerate", true}}).status, 400);
  EXPECT_EQ(web(c, "POST", "/web/chat", {{"conversation", id}}).status, 400);
}

TEST_F(WebRoutes, ErrorsAreShownInTheConversation) {
  auto c = new_client();
  auto r = web(c, "POST", "/web/conversations", {{"model", "no-such-model:latest"}});
  const std::string id = Json::parse(r.body())["id"];
  auto chat = web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "hello?"}});
  EXPECT_EQ(chat.status, 404);
  auto m = messages(c, id);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0]["content"], "hello?");  // the user's turn was saved before anything ran
  EXPECT_EQ(m[1]["state"], "error");
  EXPECT_NE(m[1]["error"].get<std::string>().find("not found"), std::string::npos) << m[1]["error"];
  // Without any model there is nothing to run: a clear 400.
  auto bare = Json::parse(web(c, "POST", "/web/conversations", {{"model", ""}}).body())["id"].get<std::string>();
  EXPECT_EQ(web(c, "POST", "/web/chat", {{"conversation", bare}, {"content", "x"}}).status, 400);
}

class WebRoutesSmallContext : public WebRoutes {
 protected:
  WebRoutesSmallContext() { context_length_ = 160; }
};

TEST_F(WebRoutesSmallContext, LongHistoriesAreTrimmedWithANote) {
  auto c = new_client();
  const std::string id = create(c);
  for (int i = 0; i < 6; ++i) {
    auto r = web(c, "POST", "/web/chat",
                 {{"conversation", id}, {"content", std::string(30, char('a' + i))}, {"options", {{"num_predict", 4}}}});
    ASSERT_EQ(r.status, 200) << r.body();
  }
  auto m = messages(c, id);
  ASSERT_EQ(m.size(), 12u);
  EXPECT_EQ(m[1]["trimmed"], 0);
  EXPECT_GT(m[11]["trimmed"].get<int>(), 0) << "six 34-byte turns do not fit 160 - 40 tokens";
  EXPECT_EQ(m[11]["trimmed"].get<int>() % 2, 0) << "whole turns are left out";
}

class WebRoutesOneAtATime : public WebRoutes {
 protected:
  WebRoutesOneAtATime() { max_generations_ = 1; }
};

TEST_F(WebRoutesOneAtATime, ASecondReplyAtOnceIs429WithRetryAfter) {
  step_delay_ = std::chrono::milliseconds(20);
  auto c = new_client(), other = new_client();
  const std::string a = create(c), b = create(c), o = create(other);
  std::thread first([&] {
    auto r = web(c, "POST", "/web/chat", {{"conversation", a}, {"content", "slow"}, {"options", {{"num_predict", 40}}}});
    EXPECT_EQ(r.status, 200);
  });
  ASSERT_TRUE([&] {
    for (int i = 0; i < 200; ++i) {
      auto m = messages(c, a);
      if (m.size() == 2 && !m[1]["content"].get<std::string>().empty()) return true;  // streaming
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }());
  auto second = web(c, "POST", "/web/chat", {{"conversation", b}, {"content", "me too"}});
  EXPECT_EQ(second.status, 429) << second.body();
  EXPECT_EQ(second.header("Retry-After"), "1");
  auto theirs = web(other, "POST", "/web/chat", {{"conversation", o}, {"content", "hi"}, {"options", {{"num_predict", 2}}}});
  EXPECT_EQ(theirs.status, 200) << "another user is not limited by this one";
  first.join();
  EXPECT_EQ(messages(c, b)[1]["state"], "error");
}

TEST_F(WebRoutes, ExportsJsonAndMarkdown) {
  auto c = new_client();
  const std::string id = create(c, "Trip: plan");
  ASSERT_EQ(web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "where to?"}, {"options", {{"num_predict", 3}}}})
                .status,
            200);
  auto j = web(c, "GET", "/web/conversations/" + id + "/export?format=json");
  ASSERT_EQ(j.status, 200);
  EXPECT_EQ(j.header("Content-Disposition"), "attachment; filename=\"Trip-plan.json\"");
  auto doc = Json::parse(j.body());
  EXPECT_EQ(doc["conversation"]["title"], "Trip: plan");
  EXPECT_EQ(doc["messages"].size(), 2u);
  auto md = web(c, "GET", "/web/conversations/" + id + "/export?format=markdown");
  ASSERT_EQ(md.status, 200);
  EXPECT_EQ(md.content_type, "text/markdown; charset=utf-8");
  EXPECT_TRUE(md.body().starts_with("# Trip: plan\n")) << md.body();
  EXPECT_NE(md.body().find("## User\n\nwhere to?\n"), std::string::npos) << md.body();
  EXPECT_NE(md.body().find("## Assistant"), std::string::npos);
  EXPECT_EQ(web(c, "GET", "/web/conversations/" + id + "/export?format=pdf").status, 400);
}

TEST_F(WebRoutes, SseFramingOnRequest) {
  auto c = new_client();
  const std::string id = create(c);
  auto r = web(c, "POST", "/web/chat", {{"conversation", id}, {"content", "x"}, {"options", {{"num_predict", 3}}}},
               {{"accept", "text/event-stream"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/event-stream");
  for (const auto& chunk : r.chunks) {
    EXPECT_TRUE(chunk.starts_with("data: ")) << chunk;
    EXPECT_TRUE(chunk.ends_with("\n\n")) << chunk;
  }
  EXPECT_EQ(lines(r).back()["type"], "done");
}

TEST_F(WebRoutes, ThePageIsServedToBrowsersWithCspAndCaching) {
  EXPECT_EQ(call("GET", "/", "").body(), "nurllama is running");
  auto page = call("GET", "/", "", {{"accept", "text/html,application/xhtml+xml"}});
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  const std::string csp = page.header("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos);
  EXPECT_EQ(page.header("Cache-Control"), "no-cache");
  const std::string etag = page.header("ETag");
  ASSERT_FALSE(etag.empty());
  auto again = call("GET", "/", "", {{"accept", "text/html"}, {"if-none-match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(again.body(), "");
  // No inline script or style, no event-handler attributes: the CSP would block them.
  const std::string html = page.body();
  EXPECT_FALSE(std::regex_search(html, std::regex("<script(?![^>]*\\bsrc=)", std::regex::ECMAScript)));
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=", std::regex::icase)));
  EXPECT_FALSE(std::regex_search(html, std::regex("\\sstyle\\s*=|<style", std::regex::icase)));
  // Assets are linked with their hash and cached for good under that URL.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, std::regex("/assets/app\\.js\\?v=([0-9a-f]{16})")));
  auto js = call("GET", "/assets/app.js?v=" + m[1].str(), "");
  ASSERT_EQ(js.status, 200);
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(js.header("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(js.header("ETag"), "\"" + m[1].str() + "\"");
  EXPECT_EQ(call("GET", "/assets/app.js", "").header("Cache-Control"), "no-cache");
  EXPECT_EQ(call("GET", "/assets/nope.js", "").status, 404);
  EXPECT_EQ(call("GET", "/assets/index.html", "").status, 404);
  // The embedded bytes are the files in web/ (the page: with its asset links filled in).
  std::ifstream src(std::string(NURL_WEB_DIR) + "/app.js", std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  EXPECT_EQ(js.body(), file);
}

}  // namespace
}  // namespace nurl
