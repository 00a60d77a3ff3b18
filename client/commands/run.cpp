// `run` and `chat`: one-shot generation (POST /api/generate) or the interactive chat REPL
// (POST /api/chat, history kept client-side). Tokens are printed as they arrive; Ctrl+C stops
// the current answer by hanging up, which makes the daemon stop generating.
#include <editline/readline.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <sstream>

#include "client/context.h"
#include "client/modelfile.h"
#include "core/json-text.h"

namespace nurl::client {

namespace {

// Set by SIGINT while an answer streams. A signal handler can only talk through a flag like this.
volatile sig_atomic_t g_interrupted = 0;

void on_sigint(int) { g_interrupted = 1; }

struct ScopedSigint {
  struct sigaction old {};
  ScopedSigint() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
  }
  ~ScopedSigint() { sigaction(SIGINT, &old, nullptr); }
};

struct RunFlags {
  std::string model;
  std::vector<std::string> prompt;
  int num_predict = -2;  // -2: not set
  double temp = -1, topp = -1;
  int topk = -1, ctx = -1, repeat_last_n = -2;
  double repeat_penalty = -1;
  long long seed = -1;
  bool seed_set = false;
  std::string format, keepalive;
  bool verbose = false;
  bool nowordwrap = false;
};

nlohmann::json options_json(const RunFlags& f) {
  nlohmann::json o = nlohmann::json::object();
  if (f.num_predict != -2) o["num_predict"] = f.num_predict;
  if (f.temp >= 0) o["temperature"] = f.temp;
  if (f.topk >= 0) o["top_k"] = f.topk;
  if (f.topp >= 0) o["top_p"] = f.topp;
  if (f.seed_set) o["seed"] = f.seed;
  if (f.ctx > 0) o["num_ctx"] = f.ctx;
  if (f.repeat_penalty >= 0) o["repeat_penalty"] = f.repeat_penalty;
  if (f.repeat_last_n != -2) o["repeat_last_n"] = f.repeat_last_n;
  return o;
}

void base_request(nlohmann::json& body, const RunFlags& f) {
  body["model"] = Context::model_ref(f.model);
  body["stream"] = true;
  auto o = options_json(f);
  if (!o.empty()) body["options"] = o;
  if (!f.format.empty()) body["format"] = f.format;
  if (!f.keepalive.empty()) body["keep_alive"] = f.keepalive;
}

std::string fmt_ns(int64_t ns) {
  char buf[64];
  double s = double(ns) / 1e9;
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.6fs", s);
  else std::snprintf(buf, sizeof buf, "%.6fms", s * 1e3);
  return buf;
}

void print_stats(const nlohmann::json& done) {
  auto i64 = [&](const char* k) { return done.value(k, int64_t(0)); };
  std::fprintf(stderr, "total duration:       %s\n", fmt_ns(i64("total_duration")).c_str());
  std::fprintf(stderr, "load duration:        %s\n", fmt_ns(i64("load_duration")).c_str());
  std::fprintf(stderr, "prompt eval count:    %lld token(s)\n", (long long)i64("prompt_eval_count"));
  std::fprintf(stderr, "prompt eval duration: %s\n", fmt_ns(i64("prompt_eval_duration")).c_str());
  if (i64("prompt_eval_duration") > 0)
    std::fprintf(stderr, "prompt eval rate:     %.2f tokens/s\n",
                 double(i64("prompt_eval_count")) * 1e9 / double(i64("prompt_eval_duration")));
  std::fprintf(stderr, "eval count:           %lld token(s)\n", (long long)i64("eval_count"));
  std::fprintf(stderr, "eval duration:        %s\n", fmt_ns(i64("eval_duration")).c_str());
  if (i64("eval_duration") > 0)
    std::fprintf(stderr, "eval rate:            %.2f tokens/s\n",
                 double(i64("eval_count")) * 1e9 / double(i64("eval_duration")));
  if (done.contains("truncated") && done["truncated"].is_number() && done["truncated"].get<int64_t>() > 0)
    std::fprintf(stderr, "prompt truncated:     %lld token(s) dropped\n", (long long)done["truncated"].get<int64_t>());
}

// Streams one request and prints the text field of each chunk. Returns the final chunk, or null
// after an error (reported) or an interrupt (Ctrl+C).
nlohmann::json stream_text(Context& ctx, const std::string& path, const nlohmann::json& body,
                           const char* text_field, std::string* collected) {
  nlohmann::json final_chunk;
  std::string stream_error;
  ScopedSigint sig;
  auto r = ctx.http->stream("POST", path, body, [&](const nlohmann::json& j) {
    if (g_interrupted) return false;
    if (j.contains("error")) {
      stream_error = j["error"].is_string() ? j["error"].get<std::string>() : dump_json(j["error"]);
      return false;
    }
    std::string piece;
    if (std::string(text_field) == "message") {
      if (j.contains("message") && j["message"].contains("content")) piece = j["message"]["content"].get<std::string>();
    } else {
      piece = j.value(text_field, "");
    }
    if (!piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
      if (collected) *collected += piece;
    }
    if (j.value("done", false)) final_chunk = j;
    return true;
  });
  if (!stream_error.empty()) {
    ctx.fail(stream_error);
    return nullptr;
  }
  if (!r.ok()) {
    if (r.error().code == Code::cancelled && g_interrupted) return nullptr;  // Ctrl+C: not an error
    ctx.fail(r.error());
    return nullptr;
  }
  return final_chunk;
}

bool is_hf_ref(const std::string& m) { return m.rfind("hf.co/", 0) == 0 || m.rfind("huggingface.co/", 0) == 0; }

// A store name that is missing but pullable (hf.co refs) is pulled first, as ollama does.
bool ensure_model(Context& ctx, const std::string& model) {
  if (!is_hf_ref(model)) return true;
  auto r = ctx.http->request("POST", "/api/show", nlohmann::json{{"model", model}});
  if (!r.ok()) {
    ctx.fail(r.error());
    return false;
  }
  if (r->status == 404) return pull_with_progress(ctx, model, "");
  return true;
}

std::string read_all_stdin() {
  std::ostringstream ss;
  ss << std::cin.rdbuf();
  return ss.str();
}

void run_once(Context& ctx, const RunFlags& f, const std::string& prompt) {
  nlohmann::json body;
  base_request(body, f);
  body["prompt"] = prompt;
  std::string text;
  auto done = stream_text(ctx, "/api/generate", body, "response", &text);
  if (ctx.stdout_tty && !text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
  if (!done.is_null() && f.verbose) print_stats(done);
}

const char* kReplHelp =
    "Available Commands:\n"
    "  /set parameter NAME VALUE   Set a parameter (temperature, top_k, num_ctx, seed, stop, ...)\n"
    "  /set system TEXT            Set the system message\n"
    "  /show info                  Show details about this model\n"
    "  /clear                      Clear the conversation\n"
    "  /bye                        Exit\n"
    "  /?, /help                   This help\n"
    "Use \"\"\" to begin and end a multi-line message.\n";

std::string history_file() {
  const char* home = std::getenv("HOME");
  return home ? std::string(home) + "/.nurllama_history" : "";
}

void chat_repl(Context& ctx, RunFlags f) {
  nlohmann::json messages = nlohmann::json::array();
  std::string system;
  nlohmann::json extra_options = nlohmann::json::object();
  const std::string hist = history_file();
  using_history();
  if (!hist.empty()) read_history(hist.c_str());
  std::printf("Chatting with %s. Type /? for help, /bye or Ctrl+D to exit.\n", f.model.c_str());
  for (;;) {
    char* raw = readline(">>> ");
    if (!raw) {
      std::printf("\n");
      break;
    }
    std::string line(raw);
    std::free(raw);
    if (line.empty()) continue;
    if (line.rfind("\"\"\"", 0) == 0) {  // multi-line until a closing """
      std::string text = line.substr(3);
      while (text.find("\"\"\"") == std::string::npos) {
        char* more = readline("... ");
        if (!more) break;
        text += "\n";
        text += more;
        std::free(more);
      }
      if (auto p = text.find("\"\"\""); p != std::string::npos) text.resize(p);
      add_history(line.c_str());
      line = text;
    } else {
      add_history(line.c_str());
      if (line == "/bye" || line == "/exit") break;
      if (line == "/?" || line == "/help") {
        std::fputs(kReplHelp, stdout);
        continue;
      }
      if (line == "/clear") {
        messages = nlohmann::json::array();
        std::printf("Cleared session context\n");
        continue;
      }
      if (line.rfind("/set system ", 0) == 0) {
        system = line.substr(12);
        std::printf("Set system message.\n");
        continue;
      }
      if (line.rfind("/set parameter ", 0) == 0) {
        std::istringstream is(line.substr(15));
        std::string name, value;
        is >> name;
        std::getline(is, value);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        auto p = parameters_json({{name, value}});
        if (!p.ok()) {
          std::printf("Error: %s\n", p.error().msg.c_str());
          continue;
        }
        for (auto& [k, v] : p->items()) {
          if (k == "stop") {
            for (auto& s : v) extra_options["stop"].push_back(s);
          } else {
            extra_options[k] = v;
          }
        }
        std::printf("Set parameter '%s' to '%s'\n", name.c_str(), value.c_str());
        continue;
      }
      if (line == "/show info") {
        auto info = ctx.call("POST", "/api/show", nlohmann::json{{"model", Context::model_ref(f.model)}});
        if (!info.is_null()) {
          auto d = info.value("details", nlohmann::json::object());
          std::printf("  architecture    %s\n  parameters      %s\n  quantization    %s\n",
                      d.value("family", "").c_str(), d.value("parameter_size", "").c_str(),
                      d.value("quantization_level", "").c_str());
        }
        ctx.exit_code = 0;
        continue;
      }
      if (line[0] == '/') {
        std::printf("Unknown command '%s'. Type /? for help\n", line.c_str());
        continue;
      }
    }
    messages.push_back({{"role", "user"}, {"content", line}});
    nlohmann::json body;
    base_request(body, f);
    nlohmann::json msgs = nlohmann::json::array();
    if (!system.empty()) msgs.push_back({{"role", "system"}, {"content", system}});
    for (auto& m : messages) msgs.push_back(m);
    body["messages"] = msgs;
    if (!extra_options.empty()) {
      if (!body.contains("options")) body["options"] = nlohmann::json::object();
      for (auto& [k, v] : extra_options.items()) body["options"][k] = v;
    }
    std::string answer;
    auto done = stream_text(ctx, "/api/chat", body, "message", &answer);
    std::printf("\n");
    if (done.is_null()) {
      if (g_interrupted) std::printf("(stopped)\n");
      messages.erase(messages.end() - 1);  // the turn did not complete: forget it
      ctx.exit_code = 0;
      continue;
    }
    messages.push_back({{"role", "assistant"}, {"content", answer}});
    std::printf("\n");
    if (f.verbose) print_stats(done);
  }
  if (!hist.empty()) write_history(hist.c_str());
}

void add_flags(CLI::App* c, RunFlags& f) {
  c->add_option("-n,--num-predict", f.num_predict, "Maximum number of tokens to generate");
  c->add_option("--temp", f.temp, "Temperature (0 = greedy)");
  c->add_option("--topk", f.topk, "Top-k sampling");
  c->add_option("--topp", f.topp, "Top-p (nucleus) sampling");
  c->add_option("--seed", f.seed, "Random seed")->each([&f](const std::string&) { f.seed_set = true; });
  c->add_option("--ctx", f.ctx, "Context length (num_ctx)");
  c->add_option("--repeat-penalty", f.repeat_penalty, "Penalty for repeated tokens (1 = off)");
  c->add_option("--repeat-last-n", f.repeat_last_n, "How many recent tokens the repeat penalty looks at");
  c->add_option("--format", f.format, "Response format (json)");
  c->add_option("--keepalive", f.keepalive, "How long the model stays loaded (e.g. 5m, 0, -1)");
  c->add_flag("--verbose", f.verbose, "Print timings after the response");
}

}  // namespace

void add_run_commands(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<RunFlags>();
  auto* run = app.add_subcommand("run", "Run a model: one prompt, or an interactive chat on a terminal");
  run->add_option("model", flags->model, "Model name, path to a .gguf, or hf.co/... reference")->required();
  run->add_option("prompt", flags->prompt, "Prompt (omit for an interactive chat)");
  add_flags(run, *flags);
  run->callback([&ctx, flags] {
    if (!ensure_model(ctx, flags->model)) return;
    std::string prompt;
    for (size_t i = 0; i < flags->prompt.size(); ++i) prompt += (i ? " " : "") + flags->prompt[i];
    if (!ctx.stdin_tty) {
      std::string in = read_all_stdin();
      if (!in.empty()) prompt = prompt.empty() ? in : in + "\n" + prompt;
    }
    if (prompt.empty() && ctx.stdin_tty) return chat_repl(ctx, *flags);
    run_once(ctx, *flags, prompt);
  });

  auto cflags = std::make_shared<RunFlags>();
  auto* chat = app.add_subcommand("chat", "Chat with a model interactively");
  chat->add_option("model", cflags->model, "Model name or path")->required();
  add_flags(chat, *cflags);
  chat->callback([&ctx, cflags] {
    if (!ensure_model(ctx, cflags->model)) return;
    chat_repl(ctx, *cflags);
  });
}

}  // namespace nurl::client
