// RouteHarness: the daemon's routes without sockets. A request goes through handle_request()
// (the real pipeline and router) and a Stream is driven on a strand exactly as the server does:
// chunks pulled one by one, and cancel() when the client "goes away" (stop_after). The models
// behind the scheduler are fakes (scheduler/fake-model.h).
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

#include "../scheduler/fake-model.h"
#include "http/pipeline.h"
#include "routes/routes.h"
#include "scheduler/scheduler.h"

namespace nurl::test {

struct RouteReply {
  int status = 0;
  std::string content_type;
  std::vector<std::string> chunks;  // the body, chunk by chunk
  std::vector<std::pair<std::string, std::string>> headers;
  bool streamed = false;
  std::optional<Error> error_after_start;

  std::string body() const {
    std::string b;
    for (const auto& c : chunks) b += c;
    return b;
  }
  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return "";
  }
};

class RouteHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    model_path_ = (std::filesystem::temp_directory_path() /
                   ("nurl-fake-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()) + ".gguf"))
                      .string();
    std::ofstream(model_path_) << "not really a gguf";
    Config c;
    c.allow_model_paths = true;
    c.context_length = 512;
    configure(c);
    config_ = std::make_unique<ConfigHolder>(c);
    sched::ModelLoader l;
    l.estimate = [](const sched::LoadSpec&) -> Result<uint64_t> { return uint64_t{100}; };
    l.load = [this](const sched::LoadSpec&) -> Result<std::shared_ptr<sched::LoadedModel>> {
      return std::shared_ptr<sched::LoadedModel>(std::make_shared<FakeModel>(&stats_, step_delay_, eog_after_));
    };
    sched::SchedulerConfig sc;
    sc.max_queue = 16;
    sc.user_max_generations = c.user_max_generations;
    scheduler_ = std::make_unique<sched::Scheduler>(sc, l, log_, observer_);
    ctx_ = std::make_unique<RouteContext>(RouteContext{log_, *config_, scheduler_.get()});
    add_services(*ctx_);
    add_all_routes(router_, *ctx_);
    policy_.origins = http::cors_allowed_origins({});
  }
  void TearDown() override {
    scheduler_->stop();
    std::filesystem::remove(model_path_);
  }

  virtual void configure(Config&) {}
  // Hooks for fixtures that add services (metrics, history, tokens) before routes are registered.
  virtual void add_services(RouteContext&) {}

  // stop_after >= 0: cancel the stream after that many chunks, as a client that hangs up.
  RouteReply call(const std::string& method, const std::string& path, const std::string& body,
                  const std::map<std::string, std::string>& headers = {}, int stop_after = -1) {
    http::Request req;
    req.method = method;
    req.target = path;
    auto q = path.find('?');
    req.path = path.substr(0, q);
    if (q != std::string::npos) req.query = path.substr(q + 1);
    req.body = body;
    req.peer.address = peer_address_;
    req.headers["host"] = "127.0.0.1:11434";
    for (const auto& [k, v] : headers) req.headers[k] = v;
    auto reply = http::handle_request(req, router_, policy_);
    last_route_ = req.route;
    RouteReply out;
    if (auto* r = std::get_if<http::Response>(&reply)) {
      out.status = r->status;
      out.content_type = r->content_type;
      out.headers = r->headers;
      out.chunks.push_back(r->body);
      return out;
    }
    auto& s = std::get<http::Stream>(reply);
    out.streamed = !s.single;
    out.content_type = s.content_type;
    out.headers = s.headers;
    io_.restart();
    auto strand = boost::asio::make_strand(io_);
    auto fut = boost::asio::co_spawn(
        strand,
        [&]() -> boost::asio::awaitable<void> {
          bool first = true;
          while (true) {
            if (stop_after >= 0 && static_cast<int>(out.chunks.size()) >= stop_after) {
              s.source->cancel();
              co_return;
            }
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
  sched::Observer* observer_ = nullptr;  // set in the derived fixture's constructor
  std::string last_route_;                // the route the last call() matched
  FakeStats stats_;
  std::chrono::milliseconds step_delay_{0};
  int eog_after_ = 0;
  std::string peer_address_ = "127.0.0.1:40000";
  std::string model_path_;
  std::unique_ptr<ConfigHolder> config_;
  std::unique_ptr<sched::Scheduler> scheduler_;
  std::unique_ptr<RouteContext> ctx_;
  http::Router router_;
  http::Policy policy_;
};

}  // namespace nurl::test
