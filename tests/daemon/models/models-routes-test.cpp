// The model-management routes through the real Router, Store and JobManager, with a pull from
// the loopback test server. Streams are drained on an io_context as the server would.
// Oracles: the golden sha256/size of the test model, ollama's documented /api/tags fields.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include <unistd.h>

#include <fstream>
#include <sstream>

#include "http/router.h"
#include "jobs/job-manager.h"
#include "routes/models.h"
#include "store/store.h"
#include "support/http-test-server.h"
#include "support/oracles.h"
#include "support/string-body-reader.h"
#include "support/temp-dir.h"

namespace nurl {
namespace {

using Json = nlohmann::json;

struct Answer {
  int status = 0;
  std::string body;
  std::vector<Json> lines;  // NDJSON lines of a stream
};

class ModelsRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    NURL_REQUIRE_TESTDATA();
    store_ = std::move(*Store::open(StoreLayout::at(dir_.path())));
    PullConfig cfg;
    cfg.backoff = std::chrono::milliseconds(10);
    jobs_ = std::make_unique<JobManager>(*store_, cfg, log_);
    ctx_.store = store_.get();
    ctx_.jobs = jobs_.get();
    add_models_routes(router_, ctx_);
    golden_ = test::golden_model("stories260K");
    std::ifstream in(test::model_file("stories260K.gguf"), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    model_ = std::make_shared<const std::string>(ss.str());
  }

  Answer call(const std::string& method, const std::string& path, const std::string& body = "",
              bool unix_socket = false) {
    http::Request req;
    req.method = method;
    req.target = req.path = path;
    if (router_.streams_body(method, path)) req.body_reader = std::make_shared<test::StringBodyReader>(body);
    else req.body = body;
    req.peer.unix_socket = unix_socket;
    req.peer.trusted = unix_socket;
    if (unix_socket) {
      req.peer.uid = int(::getuid());
      req.peer.gid = int(::getgid());
    }
    http::Reply reply = router_.dispatch(req);
    Answer a;
    if (auto* r = std::get_if<http::Response>(&reply)) {
      a.status = r->status;
      a.body = r->body;
      return a;
    }
    auto& s = std::get<http::Stream>(reply);
    a.status = s.status;
    boost::asio::io_context io;
    boost::asio::co_spawn(
        io,
        [&]() -> boost::asio::awaitable<void> {
          bool first = true;
          for (int i = 0; i < 100000; ++i) {
            auto c = co_await s.source->next();
            if (!c.ok()) {
              if (first) a.status = http_status(c.error().code);
              a.body += s.error_chunk(c.error());
              break;
            }
            if (!c->has_value()) break;
            first = false;
            a.body += **c;
          }
        },
        boost::asio::detached);
    io.run();
    std::istringstream in(a.body);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) a.lines.push_back(Json::parse(line, nullptr, false));
    return a;
  }

  std::string golden_digest() const { return "sha256:" + golden_["sha256"].get<std::string>(); }

  test::TempDir dir_;
  Logger log_{[](LogLevel, std::string_view) {}};
  ConfigHolder config_{Config{}};
  RouteContext ctx_{log_, config_, nullptr};
  http::Router router_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobManager> jobs_;
  test::HttpTestServer server_;
  Json golden_;
  std::shared_ptr<const std::string> model_;
};

TEST_F(ModelsRoutes, PullStreamsProgressThenTagsListsTheModel) {
  test::Behaviour b;
  b.content = model_;
  server_.set("/stories.gguf", b);
  auto a = call("POST", "/api/pull", Json{{"model", server_.url("/stories.gguf")}, {"name", "me/stories:v1"}}.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  ASSERT_GE(a.lines.size(), 5u) << a.body;
  EXPECT_EQ(a.lines.front()["status"], "pulling manifest");
  EXPECT_EQ(a.lines.back(), (Json{{"status", "success"}}));
  bool saw_total = false;
  for (auto& l : a.lines)
    if (l.contains("total")) {
      saw_total = true;
      EXPECT_EQ(l["total"], model_->size());
      EXPECT_LE(l["completed"].get<uint64_t>(), model_->size());
    }
  EXPECT_TRUE(saw_total) << a.body;

  auto t = call("GET", "/api/tags");
  ASSERT_EQ(t.status, 200);
  auto tags = Json::parse(t.body);
  ASSERT_EQ(tags["models"].size(), 1u);
  auto m = tags["models"][0];
  EXPECT_EQ(m["name"], "me/stories:v1");
  EXPECT_EQ(m["model"], "me/stories:v1");
  EXPECT_EQ(m["size"], golden_["size_bytes"]);
  EXPECT_EQ(m["digest"], golden_["sha256"]);
  EXPECT_EQ(m["details"]["format"], "gguf");
  EXPECT_EQ(m["details"]["family"], golden_["architecture"]);
  EXPECT_EQ(m["details"]["quantization_level"], "F32");
  EXPECT_TRUE(m["modified_at"].is_string());

  // stream:false answers one object.
  a = call("POST", "/api/pull", Json{{"model", server_.url("/stories.gguf")}, {"stream", false}}.dump());
  EXPECT_EQ(a.status, 200);
  EXPECT_EQ(Json::parse(a.body), (Json{{"status", "success"}}));
}

TEST_F(ModelsRoutes, PullErrorsBecomeStatusOrErrorLine) {
  auto a = call("POST", "/api/pull", Json{{"model", server_.url("/missing.gguf")}, {"stream", false}}.dump());
  EXPECT_GE(a.status, 400);
  EXPECT_NE(a.body.find("not found (404)"), std::string::npos) << a.body;
  a = call("POST", "/api/pull", Json{{"model", server_.url("/missing.gguf")}}.dump());
  ASSERT_FALSE(a.lines.empty());
  EXPECT_NE(a.lines.back()["error"].get<std::string>().find("404"), std::string::npos) << a.body;
  EXPECT_EQ(call("POST", "/api/pull", Json{{"model", "llama3"}}.dump()).status, 400);
  EXPECT_EQ(call("POST", "/api/pull", "not json").status, 400);
  // A server path is refused over TCP.
  a = call("POST", "/api/pull", Json{{"model", test::model_file("stories260K.gguf").string()}}.dump());
  EXPECT_EQ(a.status, 400);
  a = call("POST", "/api/pull", Json{{"model", test::model_file("stories260K.gguf").string()}, {"stream", false}}.dump(),
           /*unix_socket=*/true);
  EXPECT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(call("DELETE", "/api/pull", Json{{"model", server_.url("/idle.gguf")}}.dump()).status, 404);
}

TEST_F(ModelsRoutes, BlobUploadCreateCopyDeleteVerify) {
  std::string digest = golden_digest();
  EXPECT_EQ(call("HEAD", "/api/blobs/" + digest).status, 404);
  EXPECT_EQ(call("HEAD", "/api/blobs/sha256:..%2f..%2fetc").status, 400);
  // A body that does not hash to the digest is refused.
  auto a = call("POST", "/api/blobs/" + digest, model_->substr(0, 1000));
  EXPECT_EQ(a.status, 400) << a.body;
  EXPECT_NE(a.body.find("digest mismatch"), std::string::npos);
  EXPECT_EQ(call("HEAD", "/api/blobs/" + digest).status, 404);
  a = call("POST", "/api/blobs/" + digest, *model_);
  EXPECT_EQ(a.status, 201) << a.body;
  EXPECT_EQ(call("HEAD", "/api/blobs/" + digest).status, 200);

  a = call("POST", "/api/create",
           Json{{"model", "tiny"}, {"files", {{"stories260K.gguf", digest}}}, {"system", "Be brief."},
                {"parameters", {{"temperature", 0.2}}}}.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.lines.back(), (Json{{"status", "success"}}));
  auto r = store_->resolve("tiny");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->manifest.system, "Be brief.");

  // FROM an existing model inherits its settings.
  a = call("POST", "/api/create", Json{{"model", "tiny2"}, {"from", "tiny"}, {"template", "{{ .Prompt }}"}}.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(store_->resolve("tiny2")->manifest.system, "Be brief.");
  EXPECT_EQ(store_->resolve("tiny2")->manifest.parameters["temperature"], 0.2);
  // FROM a server path: Unix socket only.
  std::string path = test::model_file("stories260K.gguf").string();
  EXPECT_EQ(call("POST", "/api/create", Json{{"model", "p"}, {"from", path}}.dump()).status, 400);
  EXPECT_EQ(call("POST", "/api/create", Json{{"model", "p"}, {"from", path}}.dump(), true).status, 200);

  EXPECT_EQ(call("POST", "/api/copy", Json{{"source", "tiny"}, {"destination", "me/tiny:copy"}}.dump()).status, 200);
  EXPECT_EQ(call("POST", "/api/copy", Json{{"source", "nope"}, {"destination", "x"}}.dump()).status, 404);
  EXPECT_EQ(call("POST", "/api/copy", Json{{"source", "tiny"}, {"destination", "../x"}}.dump()).status, 400);

  a = call("POST", "/api/verify", Json{{"model", "me/tiny:copy"}}.dump());
  ASSERT_EQ(a.status, 200) << a.body;
  auto v = Json::parse(a.body);
  EXPECT_EQ(v["ok"], true);
  EXPECT_EQ(v["actual"], digest);

  EXPECT_EQ(call("DELETE", "/api/delete", Json{{"model", "tiny"}}.dump()).status, 200);
  EXPECT_EQ(call("DELETE", "/api/delete", Json{{"model", "tiny"}}.dump()).status, 404);
  auto tags = Json::parse(call("GET", "/api/tags").body)["models"];
  std::vector<std::string> names;
  for (auto& m : tags) names.push_back(m["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"me/tiny:copy", "p:latest", "tiny2:latest"}));
  EXPECT_TRUE(store_->has_blob(digest)) << "still referenced";
}

}  // namespace
}  // namespace nurl
