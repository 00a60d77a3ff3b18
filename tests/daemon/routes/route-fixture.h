// The daemon's routes without sockets: request → handle_request → the Reply's chunks, a Stream
// driven on a strand the way the server drives it (an error before the first chunk becomes the
// Stream's error reply, one after it the Stream's framed error chunk), with the fake model behind
// a real scheduler.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "../scheduler/fake-model.h"
#include "http/pipeline.h"
#include "routes/routes.h"
#include "scheduler/scheduler.h"

namespace nurl::test {

struct RouteReply {
  int status = 0;
  std::string content_type;
  std::vector<std::string> chunks;  // the body, chunk by chunk
  bool streamed = false;
  std::optional<Error> error_after_start;

  std::string body() const {
    std::string b;
    for (const auto& c : chunks) b += c;
    return b;
  }
};

class RouteFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    model_path_ = (std::filesystem::temp_directory_path() /
                   ("nurl-fake-" + std::to_string(::getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(this)) +
                    ".gguf"))
                      .string();
    std::ofstream(model_path_) << "not really a gguf";
    Config c;
    c.allow_model_paths = true;
    c.context_length = 512;
    config_ = std::make_unique<ConfigHolder>(c);
    sched::ModelLoader l;
    l.estimate = [](const sched::LoadSpec&) -> Result<uint64_t> { return uint64_t{100}; };
    l.load = [this](const sched::LoadSpec&) -> Result<std::shared_ptr<sched::LoadedModel>> {
      return std::shared_ptr<sched::LoadedModel>(std::make_shared<FakeModel>(&stats_, step_delay_, 0));
    };
    sched::SchedulerConfig sc;
    sc.max_queue = 16;
    scheduler_ = std::make_unique<sched::Scheduler>(sc, l, log_, observer_);
    ctx_ = std::make_unique<RouteContext>(RouteContext{log_, *config_, scheduler_.get()});
    setup_context(*ctx_);
    add_all_routes(router_, *ctx_);
    policy_.origins = http::cors_allowed_origins({});
  }
  void TearDown() override {
    scheduler_->stop();
    std::filesystem::remove(model_path_);
  }
  // Hooks for fixtures that add services (metrics, a store) before the routes are registered.
  virtual void setup_context(RouteContext&) {}

  RouteReply call(const std::string& method, const std::string& path, const std::string& body,
                  const std::map<std::string, std::string>& headers = {}) {
    http::Request req;
    req.method = method;
    req.path = req.target = path;
    req.body = body;
    req.headers = headers;
    auto reply = http::handle_request(req, router_, policy_);
    last_route_ = req.route;
    RouteReply out;
    if (auto* r = std::get_if<http::Response>(&reply)) {
      out.status = r->status;
      out.content_type = r->content_type;
      out.chunks.push_back(r->body);
      return out;
    }
    auto& s = std::get<http::Stream>(reply);
    out.streamed = !s.single;
    out.content_type = s.content_type;
    io_.restart();
    auto strand = boost::asio::make_strand(io_);
    auto fut = boost::asio::co_spawn(
        strand,
        [&]() -> boost::asio::awaitable<void> {
          bool first = true;
          while (true) {
            auto c = co_await s.source->next();
            if (!c.ok()) {
              if (first) {
                http::Response r = s.error_reply ? s.error_reply(c.error()) : http::error_response(c.error());
                out.status = r.status;
                out.content_type = r.content_type;
                out.streamed = false;
                out.chunks.push_back(r.body);
              } else {
                out.error_after_start = c.error();
                if (s.error_chunk) out.chunks.push_back(s.error_chunk(c.error()));
              }
              co_return;
            }
            if (!c->has_value()) co_return;
            if (first) out.status = s.status;
            first = false;
            out.chunks.push_back(**c);
          }
        },
        boost::asio::use_future);
    io_.run();
    fut.get();
    return out;
  }

  std::string model_json() { return nlohmann::json(model_path_).dump(); }

  // Outlives the scheduler: a job still held by a worker after call() returns keeps an executor
  // of this context, released when TearDown() stops the scheduler.
  boost::asio::io_context io_;
  Logger log_{[](LogLevel, std::string_view) {}, LogLevel::error};
  FakeStats stats_;
  std::chrono::milliseconds step_delay_{0};
  sched::Observer* observer_ = nullptr;
  std::string model_path_;
  std::string last_route_;
  std::unique_ptr<ConfigHolder> config_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<RouteContext> ctx_;
  http::Router router_;
  http::Policy policy_;
};

}  // namespace nurl::test
