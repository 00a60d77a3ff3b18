// `nurllama start`: the setup wizard. It asks for the models directory (listing what is there),
// the default model, who may connect (localhost or the network), access (open or bearer
// tokens; Enter generates a strong token, printed once) and the port; writes
// $NURLLAMA_HOME/config.json (mode 0600), which nurllamad reads under its other config sources;
// then asks a running daemon to reload, or starts nurllamad in the foreground.
//
// A second run offers the saved answers; `-y` takes them without asking. Every question has a
// flag, and flags skip their question. Bad answers are asked again with the reason. Network +
// open access needs a typed confirmation (or --insecure-open with -y) and prints a warning.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#include "auth/token-store.h"
#include "client/context.h"
#include "client/format.h"
#include "client/model-scan.h"
#include "core/json-text.h"
#include "store/fs-util.h"

namespace nurl::client {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string env_or(const char* name, const std::string& dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

// Where nurllamad keeps its state when run by this user (config.cpp: state_dir_of).
std::string state_home() {
  std::string h = env_or("NURLLAMA_HOME", env_or("NURLLAMA_STATE_DIR", ""));
  return h.empty() ? env_or("HOME", "/var/lib/nurllama") + "/.nurllama" : h;
}

struct Settings {
  std::string models;
  std::string default_model;
  std::string bind = "localhost";
  std::string access = "open";
  int port = 11434;

  Json to_json() const {
    return {{"models", models}, {"default_model", default_model}, {"bind", bind}, {"access", access}, {"port", port}};
  }
  std::string summary() const {
    return "models " + models + ", default model " + (default_model.empty() ? "(none)" : default_model) + ", " +
           (bind == "network" ? "the network" : "localhost only") + ", access " + access + ", port " +
           std::to_string(port);
  }
};

struct Flags {
  bool yes = false, insecure_open = false, no_start = false;
  std::string models, model, bind, access, token, port;
};

// Reads answers; EOF ends the wizard (nothing is written).
class Asker {
 public:
  std::optional<std::string> ask(const std::string& question, const std::string& dflt) {
    std::cout << question << (dflt.empty() ? "" : " [" + dflt + "]") << ": " << std::flush;
    std::string line;
    if (!std::getline(std::cin, line)) return std::nullopt;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    size_t a = line.find_first_not_of(' ');
    line = a == std::string::npos ? "" : line.substr(a);
    return line.empty() ? dflt : line;
  }
  static void again(const std::string& why) { std::cout << "  " << why << "\n"; }
};

Result<std::string> valid_models_dir(const std::string& answer) {
  std::error_code ec;
  fs::path p = fs::absolute(answer, ec).lexically_normal();
  if (fs::is_directory(p, ec)) return p.string();
  if (fs::exists(p, ec)) return Error(Code::invalid_argument, p.string() + " is not a directory");
  if (!fs::is_directory(p.parent_path(), ec))
    return Error(Code::invalid_argument, "no such directory: " + p.parent_path().string());
  return p.string();  // the daemon creates it
}

Result<std::string> valid_bind(const std::string& a) {
  if (a == "1" || a == "localhost") return std::string("localhost");
  if (a == "2" || a == "network") return std::string("network");
  return Error(Code::invalid_argument, "answer 1 (localhost) or 2 (network)");
}

Result<std::string> valid_access(const std::string& a) {
  if (a == "1" || a == "open") return std::string("open");
  if (a == "2" || a == "tokens") return std::string("tokens");
  return Error(Code::invalid_argument, "answer 1 (open) or 2 (tokens)");
}

Result<int> valid_port(const std::string& a) {
  int p = 0;
  for (char c : a) {
    if (c < '0' || c > '9' || p > 65535) return Error(Code::invalid_argument, "a port is a number from 1 to 65535");
    p = p * 10 + (c - '0');
  }
  if (a.empty() || p < 1 || p > 65535) return Error(Code::invalid_argument, "a port is a number from 1 to 65535");
  return p;
}

Result<void> valid_own_token(const std::string& t) {
  if (t.size() < 24) return Error(Code::invalid_argument, "a token needs at least 24 characters (press Enter for one)");
  for (char c : t)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("-._~+/=", c))
      return Error(Code::invalid_argument, "a token uses letters, digits and - . _ ~ + / = only");
  return ok();
}

// The default model: a number from the list, a listed name, or a path to a .gguf file.
Result<std::string> valid_model(const std::string& a, const std::vector<FoundModel>& found) {
  if (a == "-" || a == "none") return std::string();
  const FoundModel* pick = nullptr;
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    size_t i = std::stoul(a);
    if (i < 1 || i > found.size()) return Error(Code::invalid_argument, "choose 1 to " + std::to_string(found.size()));
    pick = &found[i - 1];
  }
  for (const auto& m : found)
    if (!pick && (m.name == a || m.label == a)) pick = &m;
  if (!pick) {
    std::error_code ec;
    if (a.size() > 5 && a.ends_with(".gguf") && fs::is_regular_file(a, ec)) return fs::absolute(a, ec).string();
    return Error(Code::invalid_argument, "\"" + a + "\" is not in the list (a number, a name, or a .gguf path)");
  }
  if (pick->kind == FoundModel::Kind::checkpoint)
    return Error(Code::invalid_argument, pick->label + " is a Hugging Face checkpoint: convert it first");
  return pick->name;
}

void print_models(const std::string& dir, const std::vector<FoundModel>& found) {
  if (found.empty()) {
    std::cout << "  No models in " << dir << " yet (add one later with `nurllama pull NAME`).\n";
    return;
  }
  std::cout << "  Models in " << dir << ":\n";
  for (size_t i = 0; i < found.size(); ++i) {
    const auto& m = found[i];
    std::string what = m.kind == FoundModel::Kind::store ? "store" + (m.family.empty() ? "" : ", " + m.family)
                       : m.kind == FoundModel::Kind::gguf ? "gguf file"
                                                          : "convert first (Hugging Face checkpoint)";
    char line[512];
    std::snprintf(line, sizeof line, "  %3zu. %-36s %10s  %s\n", i + 1, m.label.c_str(), human_bytes(m.size).c_str(),
                  what.c_str());
    std::cout << line;
  }
}

// Asks until `valid` accepts the answer (saying why not each time); nullopt when stdin ends.
template <class Valid>
auto ask_until_valid(Asker& q, const std::string& question, const std::string& dflt, Valid valid)
    -> std::optional<std::remove_cvref_t<decltype(valid(std::string()).value())>> {
  while (true) {
    auto a = q.ask(question, dflt);
    if (!a) return std::nullopt;
    auto v = valid(*a);
    if (v.ok()) return std::move(v).value();
    q.again(v.error().msg);
  }
}

const char* kOpenNetworkWarning =
    "WARNING: with network access and no tokens, anyone who can reach this machine can use its\n"
    "models, read the web chat and pull or delete models. Use tokens unless the network is yours alone.\n";

// The interactive questions; flags answer theirs. false: stdin ended.
bool ask_all(Settings& s, const Flags& f, std::optional<std::string>* new_token) {
  Asker q;
  auto loop = [&](const std::string& question, const std::string& dflt, auto valid) { return ask_until_valid(q, question, dflt, valid); };
  if (f.models.empty()) {
    auto v = loop("Models directory", s.models, valid_models_dir);
    if (!v) return false;
    s.models = *v;
  }
  auto found = scan_models(s.models);
  if (f.model.empty()) {
    print_models(s.models, found);
    std::string dflt = s.default_model;
    if (dflt.empty()) {
      for (size_t i = 0; i < found.size() && dflt.empty(); ++i)
        if (found[i].kind != FoundModel::Kind::checkpoint) dflt = std::to_string(i + 1);
    }
    if (!found.empty() || !dflt.empty()) {
      auto v = loop("Default model (number, name, path, or - for none)", dflt,
                    [&](const std::string& a) { return valid_model(a, found); });
      if (!v) return false;
      s.default_model = *v;
    }
  }
  if (f.bind.empty()) {
    auto v = loop("Who may connect? 1) this computer only  2) the network", s.bind == "network" ? "2" : "1", valid_bind);
    if (!v) return false;
    s.bind = *v;
  }
  if (f.access.empty()) {
    while (true) {
      auto v = loop("Access: 1) open  2) bearer tokens", s.access == "tokens" || s.bind == "network" ? "2" : "1",
                    valid_access);
      if (!v) return false;
      s.access = *v;
      if (!(s.bind == "network" && s.access == "open")) break;
      std::cout << kOpenNetworkWarning;
      auto c = q.ask("Type yes to allow open access from the network", "no");
      if (!c) return false;
      if (*c == "yes") break;
      q.again("keeping it closed: choose the access again");
    }
  }
  if (s.access == "tokens" && f.token.empty()) {
    auto v = loop("Press Enter to generate an access token, or paste your own", "",
                  [](const std::string& a) -> Result<std::string> {
                    if (a.empty()) return auth::generate_token();
                    NURL_TRY(valid_own_token(a));
                    return a;
                  });
    if (!v) return false;
    *new_token = *v;
  }
  if (f.port.empty()) {
    auto v = loop("Port", std::to_string(s.port), valid_port);
    if (!v) return false;
    s.port = *v;
  }
  return true;
}

// Adds the token as "default" (or default-2, -3 …) with the admin scope.
Result<std::string> save_token(const std::string& home, const std::string& secret) {
  const std::string path = home + "/tokens.json";
  for (int i = 1; i < 100; ++i) {
    std::string name = i == 1 ? "default" : "default-" + std::to_string(i);
    auto r = auth::add_token_to_file(path, name, auth::Scope::admin, secret);
    if (r.ok()) return name;
    if (r.error().code != Code::already_exists) return r.error();
  }
  return Error(Code::already_exists, "too many default tokens in " + path);
}

void start_or_reload(Context& ctx, const Settings& s, const std::string& home, const Flags& f) {
  const std::string cfg_path = home + "/config.json";
  auto ping = ctx.http->request("GET", "/api/version");
  if (ping.ok() && ping->status == 200) {
    auto r = ctx.http->request("POST", "/control/reload", Json::object());
    if (!r.ok() || r->status != 200) {
      ctx.fail("the running daemon did not reload: " + (r.ok() ? error_text(*r) : r.error().msg));
      return;
    }
    std::string read = r->json().value("config_json", "");
    std::cout << "The running nurllamad reloaded its configuration.\n";
    if (read != cfg_path)
      std::cout << "  Note: it reads " << (read.empty() ? "no config.json" : read) << ", not " << cfg_path
                << "; restart it with NURLLAMA_HOME=" << home << ".\n";
    std::cout << "  A new port or bind address takes effect when the daemon restarts.\n";
    return;
  }
  if (f.no_start) {
    std::cout << "Saved. Start the daemon with `nurllama start -y`.\n";
    return;
  }
  std::cout << "Starting nurllamad on http://" << (s.bind == "network" ? "0.0.0.0" : "127.0.0.1") << ":" << s.port
            << "/ (Ctrl-C stops it)\n"
            << std::flush;
  ::setenv("NURLLAMA_HOME", home.c_str(), 1);
  std::string exe = find_daemon();
  char* argv[] = {exe.data(), nullptr};
  execvp(exe.c_str(), argv);
  ctx.fail("could not start " + exe + ": " + std::strerror(errno));
}

void run_start(Context& ctx, const Flags& f) {
  const std::string home = state_home();
  const std::string cfg_path = home + "/config.json";
  Settings s;
  s.models = env_or("NURLLAMA_MODELS", env_or("OLLAMA_MODELS", home + "/models"));

  std::optional<Json> saved;
  std::error_code ec;
  if (fs::exists(cfg_path, ec)) {
    auto text = read_small_file(cfg_path);
    Json j = text.ok() ? parse_json(*text) : Json();
    if (!j.is_object()) {
      std::cout << "Ignoring " << cfg_path << ": it is not a JSON object (it will be replaced).\n";
    } else {
      saved = j;
      s.models = j.value("models", s.models);
      s.default_model = j.value("default_model", s.default_model);
      s.bind = j.value("bind", s.bind);
      s.access = j.value("access", s.access);
      if (j.contains("port") && j["port"].is_number_integer()) s.port = j["port"].get<int>();
    }
  }
  // Flags answer their questions.
  auto apply = [&](const std::string& v, auto valid, auto& dst, const char* flag) {
    if (v.empty()) return true;
    auto r = valid(v);
    if (!r.ok()) {
      ctx.fail(std::string(flag) + ": " + r.error().msg, 2);
      return false;
    }
    dst = *r;
    return true;
  };
  if (!apply(f.models, valid_models_dir, s.models, "--models") || !apply(f.bind, valid_bind, s.bind, "--bind") ||
      !apply(f.access, valid_access, s.access, "--access") ||
      !apply(f.port, valid_port, s.port, "--port"))
    return;
  if (!f.model.empty()) {
    auto m = valid_model(f.model, scan_models(s.models));
    if (!m.ok()) return ctx.fail("--model: " + m.error().msg, 2);
    s.default_model = *m;
  }
  std::optional<std::string> new_token;
  if (!f.token.empty()) {
    if (auto r = valid_own_token(f.token); !r.ok()) return ctx.fail("--token: " + r.error().msg, 2);
    new_token = f.token;
  }

  bool reuse = false;
  if (saved) {
    if (f.yes) {
      reuse = true;
    } else {
      std::cout << "Saved configuration (" << cfg_path << "):\n  " << s.summary() << "\n";
      Asker q;
      while (true) {
        auto a = q.ask("Use it? (y/n)", "y");
        if (!a) return ctx.fail("no answer: nothing changed");
        if (*a == "y" || *a == "yes") reuse = true;
        else if (*a != "n" && *a != "no") {
          q.again("answer y or n");
          continue;
        }
        break;
      }
    }
  }
  if (!reuse && !f.yes) {
    std::cout << "nurllama setup: the answers are saved to " << cfg_path << "\n";
    if (!ask_all(s, f, &new_token)) return ctx.fail("no answer: nothing was saved");
  }
  if (s.bind == "network" && s.access == "open") {
    std::cerr << kOpenNetworkWarning;
    if (f.yes && !f.insecure_open)
      return ctx.fail("network + open access with -y needs --insecure-open (or choose --access tokens)", 2);
  }
  if (s.access == "tokens" && !new_token && f.yes && !fs::exists(home + "/tokens.json", ec)) {
    auto t = auth::generate_token();
    if (!t.ok()) return ctx.fail(t.error());
    new_token = *t;
  }

  if (auto r = write_file_atomic(cfg_path, dump_json(s.to_json(), 2) + "\n", 0600); !r.ok()) return ctx.fail(r.error());
  std::cout << "Saved " << cfg_path << "\n";
  if (new_token) {
    auto name = save_token(home, *new_token);
    if (!name.ok()) return ctx.fail(name.error());
    std::cout << "Access token \"" << *name << "\" (admin). It is shown only this once; keep it safe:\n\n  "
              << *new_token << "\n\n";
  }
  start_or_reload(ctx, s, home, f);
}

}  // namespace

void add_start_command(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<Flags>();
  auto* start = app.add_subcommand("start", "Set up (models, access, port) and start the daemon");
  start->add_flag("-y,--yes", f->yes, "Reuse the saved answers (or the flags and defaults) without asking");
  start->add_option("--models", f->models, "Models directory");
  start->add_option("--model", f->model, "Default model (a store name or a .gguf path)");
  start->add_option("--bind", f->bind, "localhost or network");
  start->add_option("--access", f->access, "open or tokens");
  start->add_option("--port", f->port, "TCP port");
  start->add_option("--token", f->token, "Use this access token instead of generating one");
  start->add_flag("--insecure-open", f->insecure_open, "Allow network + open access with -y");
  start->add_flag("--no-start", f->no_start, "Only write the configuration");
  start->callback([&ctx, f] { run_start(ctx, *f); });
}

}  // namespace nurl::client
