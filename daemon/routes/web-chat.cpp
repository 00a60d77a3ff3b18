// POST /web/chat: one reply in a web conversation, through the same seam as every API
// (begin_inference → sched::Job → EventStream). The user turn is saved before anything is
// generated; the assistant turn is saved as it streams (at most every 100 ms, and at the end),
// so a reply cut short by Stop, a closed tab or a killed daemon stays in the history, marked
// incomplete. The prompt is the model's own template over the whole conversation; when it does
// not fit the context, the oldest turns are left out and the reply says how many.
//
// Stream lines (NDJSON, or SSE `data:` events with Accept: text/event-stream):
//   {"type":"text","text":…}  {"type":"thinking","text":…}  (the first carries "message_id", "trimmed")
//   {"type":"done","message":{…the saved assistant message…}}
//   {"type":"error","error":…}  (an error after the reply started)
#include <atomic>
#include <mutex>

#include "api/ollama.h"
#include "core/json-text.h"
#include "core/utf8.h"
#include "history/history.h"
#include "routes/event-stream.h"
#include "routes/inference.h"
#include "routes/web.h"

namespace nurl {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSaveEvery = std::chrono::milliseconds(100);

// The assistant message as it grows, written to the history.
class ReplyRecorder {
 public:
  ReplyRecorder(history::History& h, std::string client, std::string conversation, history::Message m, Logger& log)
      : h_(h), client_(std::move(client)), conv_(std::move(conversation)), m_(std::move(m)), log_(log) {}
  ~ReplyRecorder() { stop(); }

  void add(const sched::Event& ev) {
    std::lock_guard lk(mu_);
    if (final_) return;
    if (ev.kind == sched::Event::Kind::thinking) m_.thinking += ev.text;
    else if (ev.kind == sched::Event::Kind::text) m_.content += ev.text;
    if (Clock::now() - saved_ >= kSaveEvery) save();
  }
  void finish(const std::string& timings, int trimmed) {
    std::lock_guard lk(mu_);
    if (final_) return;
    m_.state = "complete";
    m_.timings = timings;
    m_.trimmed = trimmed;
    final_ = true;
    save();
  }
  void fail(const Error& e) {
    std::lock_guard lk(mu_);
    if (final_) return;
    // A cancel (Stop, a closed tab, shutdown) keeps what was said as incomplete.
    if (e.code != Code::cancelled) {
      m_.state = "error";
      m_.error = e.msg;
    }
    final_ = true;
    save();
  }
  void stop() {
    std::lock_guard lk(mu_);
    if (final_) return;
    final_ = true;
    save();
  }
  void set_trimmed(int n) {
    std::lock_guard lk(mu_);
    m_.trimmed = n;
  }
  history::Message message() {
    std::lock_guard lk(mu_);
    return m_;
  }

 private:
  void save() {
    saved_ = Clock::now();
    if (auto r = h_.update_reply(client_, conv_, m_); !r.ok()) log_.warn("web chat: saving a reply: " + r.error().msg);
  }

  history::History& h_;
  std::string client_, conv_;
  std::mutex mu_;
  history::Message m_;
  Logger& log_;
  bool final_ = false;
  Clock::time_point saved_{};
};

// The EventStream, with every outcome reported to the recorder.
class RecordingSource : public http::ChunkSource {
 public:
  RecordingSource(std::shared_ptr<EventStream> inner, std::shared_ptr<ReplyRecorder> rec)
      : inner_(std::move(inner)), rec_(std::move(rec)) {}
  boost::asio::awaitable<Result<std::optional<std::string>>> next() override {
    auto r = co_await inner_->next();
    if (!r.ok()) rec_->fail(r.error());
    co_return r;
  }
  void cancel() override {
    rec_->stop();
    inner_->cancel();
  }

 private:
  std::shared_ptr<EventStream> inner_;
  std::shared_ptr<ReplyRecorder> rec_;
};

struct ChatBody {
  std::string conversation, content, model;
  bool regenerate = false;
  api::Options options;
};

Result<ChatBody> parse_body(const std::string& text, const Config& cfg) {
  WebJson j = parse_json(text);
  if (!j.is_object()) return Error(Code::invalid_argument, "expected a JSON object");
  ChatBody b;
  if (!j.contains("conversation") || !j["conversation"].is_string())
    return Error(Code::invalid_argument, "conversation (the id) is required");
  b.conversation = j["conversation"].get<std::string>();
  if (j.contains("content")) {
    if (!j["content"].is_string()) return Error(Code::invalid_argument, "content must be a string");
    b.content = j["content"].get<std::string>();
  }
  if (j.contains("regenerate")) {
    if (!j["regenerate"].is_boolean()) return Error(Code::invalid_argument, "regenerate must be true or false");
    b.regenerate = j["regenerate"].get<bool>();
  }
  if (j.contains("model") && !j["model"].is_null()) {
    if (!j["model"].is_string()) return Error(Code::invalid_argument, "model must be a string");
    b.model = j["model"].get<std::string>();
  }
  if (j.contains("options") && !j["options"].is_null()) {
    std::vector<std::string> ignored;
    NURL_ASSIGN(b.options, api::parse_options(j["options"], &ignored));
  }
  if (b.regenerate == !b.content.empty())
    return Error(Code::invalid_argument, "send either content (a new message) or regenerate: true");
  if (!utf8::valid(b.content)) return Error(Code::invalid_argument, "content is not valid UTF-8");
  (void)cfg;
  return b;
}

// The first line of a message, at most 60 bytes of whole characters: a new conversation's title.
std::string title_from(const std::string& content) {
  std::string t = content.substr(0, content.find('\n'));
  if (t.size() > 60) {
    t.resize(utf8::complete_prefix(std::string_view(t).substr(0, 60)));
    t += "…";
  }
  return t;
}

// Renders the conversation, leaving out the oldest turns until the prompt leaves room for the
// answer in the context; `trimmed` counts the messages left out.
Result<sched::PreparedPrompt> render_fitting(const sched::LoadedModel& m, std::vector<sched::ChatMessage> msgs,
                                             const std::string& tmpl, int n_ctx, int num_predict,
                                             std::atomic<int>* trimmed) {
  const int reserve = num_predict > 0 ? std::min(num_predict, n_ctx / 2) : n_ctx / 4;
  const size_t first = (!msgs.empty() && msgs[0].role == "system") ? 1 : 0;
  int dropped = 0;
  while (true) {
    sched::PreparedPrompt p;
    if (m.facts().has_chat_template || !tmpl.empty()) {
      NURL_ASSIGN(p.rendered, m.render_chat(msgs, tmpl, true));
    } else {
      for (const auto& x : msgs) p.rendered += (p.rendered.empty() ? "" : "\n") + x.content;
    }
    NURL_ASSIGN(p.tokens, m.tokenize(p.rendered, true));
    // Keep at least the last user turn; the worker truncates tokens if even that is too long.
    if (static_cast<int>(p.tokens.size()) <= n_ctx - reserve || msgs.size() <= first + 1) {
      trimmed->store(dropped);
      return p;
    }
    // Drop the oldest turn, and the replies before the next user turn, so the rest still
    // alternates as templates expect.
    msgs.erase(msgs.begin() + static_cast<long>(first));
    ++dropped;
    while (msgs.size() > first + 1 && msgs[first].role != "user") {
      msgs.erase(msgs.begin() + static_cast<long>(first));
      ++dropped;
    }
  }
}

bool wants_sse(const http::Request& req) { return req.header("accept").find("text/event-stream") != std::string::npos; }

http::Reply web_chat(RouteContext& ctx, const http::Request& req, const WebClient& client, const Config& cfg) {
  const auto t0 = Clock::now();
  auto& hist = *ctx.history;
  auto body = parse_body(req.body, cfg);
  if (!body.ok()) return http::error_response(body.error());
  if (body->content.size() > cfg.web_max_message)
    return http::error_response(413, "the message is larger than " + std::to_string(cfg.web_max_message) +
                                         " bytes (web_max_message)");
  auto conv = hist.get_conversation(client.id, body->conversation);
  if (!conv.ok()) return http::error_response(conv.error());

  std::string model = !body->model.empty() ? body->model : !conv->model.empty() ? conv->model : cfg.default_model;
  if (model.empty()) return http::error_response(400, "choose a model for this conversation first");
  history::ConversationPatch patch;
  if (model != conv->model) patch.model = model;
  if (conv->title.empty() && !body->content.empty()) patch.title = title_from(body->content);
  if (patch.model || patch.title) {
    auto up = hist.update_conversation(client.id, conv->id, patch);
    if (!up.ok()) return http::error_response(up.error());
    conv = std::move(up);
  }

  auto msgs = hist.messages(client.id, conv->id);
  if (!msgs.ok()) return http::error_response(msgs.error());
  if (body->regenerate) {
    if (!msgs->empty() && msgs->back().role == "assistant") {
      if (auto r = hist.truncate_from(client.id, conv->id, msgs->back().id); !r.ok()) return http::error_response(r.error());
      msgs->pop_back();
    }
    if (msgs->empty() || msgs->back().role != "user") return http::error_response(400, "there is no message to answer");
  } else {
    history::Message user;
    user.role = "user";
    user.content = body->content;
    auto id = hist.add_message(client.id, conv->id, user);
    if (!id.ok()) return http::error_response(id.error());
    user.id = *id;
    msgs->push_back(user);
  }

  // The assistant turn exists from now on, incomplete until the reply ends.
  history::Message reply;
  reply.role = "assistant";
  reply.model = model;
  reply.options = dump_json(body->options.to_json());
  reply.state = "incomplete";
  reply.created_at = history::now_ms();
  auto reply_id = hist.add_message(client.id, conv->id, reply);
  if (!reply_id.ok()) return http::error_response(reply_id.error());
  reply.id = *reply_id;
  auto rec = std::make_shared<ReplyRecorder>(hist, client.id, conv->id, reply, ctx.log);

  // The configured default model may be a .gguf path: the administrator chose it.
  auto c = begin_inference(ctx, req, {model, body->options, std::nullopt, true, model == cfg.default_model});
  if (!c.ok()) {
    rec->fail(c.error());
    return http::error_response(c.error());
  }
  auto job = c->job;
  job->user = client.user;
  std::vector<sched::ChatMessage> turns;
  const std::string system = !conv->system.empty() ? conv->system : c->model.system;
  if (!system.empty()) turns.push_back({"system", system});
  for (const auto& m : *msgs) {
    if (m.role == "assistant" && m.state == "error") continue;
    sched::ChatMessage cm(m.role, m.content);
    cm.thinking = m.thinking;
    turns.push_back(std::move(cm));
  }
  auto trimmed = std::make_shared<std::atomic<int>>(0);
  job->prepare = [turns = std::move(turns), tmpl = c->model.template_override, n_ctx = job->spec.n_ctx,
                  num_predict = job->num_predict, trimmed](const sched::LoadedModel& m) {
    return render_fitting(m, turns, tmpl, n_ctx, num_predict, trimmed.get());
  };

  const bool sse = wants_sse(req);
  Framing framing;
  if (sse) framing.frame = [](const std::string& p) { return "data: " + p + "\n\n"; };
  else framing.frame = [](const std::string& p) { return p + "\n"; };

  EventFormat fmt;
  fmt.chunk = [rec, trimmed, id = reply.id, first = std::make_shared<bool>(true)](const sched::Event& ev,
                                                                                  const ReplyAggregate&) {
    if (ev.kind != sched::Event::Kind::text && ev.kind != sched::Event::Kind::thinking) return std::string();
    rec->add(ev);
    WebJson j = {{"type", ev.kind == sched::Event::Kind::text ? "text" : "thinking"}, {"text", ev.text}};
    if (*first) {
      *first = false;
      j["message_id"] = id;
      j["trimmed"] = trimmed->load();
      rec->set_trimmed(trimmed->load());
    }
    return web_dump(j);
  };
  fmt.final = [rec, trimmed, t0](const ReplyAggregate&, const sched::DoneInfo& d) {
    api::Json stats = api::Json::object();
    put_done_stats(stats, d, t0);
    rec->finish(dump_json(stats), trimmed->load());
    return web_dump({{"type", "done"}, {"message", message_json(rec->message())}});
  };

  if (auto r = submit_job(ctx, job); !r.ok()) {
    rec->fail(r.error());
    return http::error_response(r.error());
  }
  http::Stream s;
  s.content_type = sse ? "text/event-stream" : "application/x-ndjson";
  auto inner = std::make_shared<EventStream>(job->out, std::move(fmt), framing, false);
  s.source = std::make_shared<RecordingSource>(std::move(inner), rec);
  s.error_chunk = [framing](const Error& e) { return framing.frame(web_dump({{"type", "error"}, {"error", e.msg}})); };
  return s;
}

}  // namespace

void add_web_chat_routes(http::Router& r, RouteContext& ctx) {
  r.add("POST", "/web/chat", [&ctx](const http::Request& req) {
    return with_client(ctx, req, [&](const WebClient& c, const Config& cfg) { return web_chat(ctx, req, c, cfg); });
  });
}

}  // namespace nurl
