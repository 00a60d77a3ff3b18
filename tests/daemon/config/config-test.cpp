// Configuration precedence (defaults < file < environment < flags), the OLLAMA_* aliases, and
// errors that name the source.
#include "config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace nurl {
namespace {

std::string write_temp(const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("nurl-config-" + std::to_string(::getpid()) + "-" +
                                                     std::to_string(std::rand()) + ".conf");
  std::ofstream(p) << text;
  return p.string();
}

TEST(Config, DefaultsWithoutSources) {
  ConfigSources src;
  src.env["HOME"] = "/nonexistent-home";
  auto c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->host.host, "127.0.0.1");
  EXPECT_EQ(c->host.port, 11434);
  EXPECT_EQ(c->models_dir, "/nonexistent-home/.nurllama/models");
  EXPECT_EQ(c->keep_alive, std::chrono::minutes(5));
}

TEST(Config, OllamaAliasesAndNurllamaPrecedence) {
  ConfigSources src;
  src.env = {{"HOME", "/h"},
             {"OLLAMA_HOST", "0.0.0.0:9999"},
             {"OLLAMA_KEEP_ALIVE", "10m"},
             {"OLLAMA_MAX_LOADED_MODELS", "7"},
             {"OLLAMA_NUM_PARALLEL", "3"},
             {"NURLLAMA_NUM_PARALLEL", "5"},
             {"OLLAMA_MAX_QUEUE", "9"},
             {"OLLAMA_CONTEXT_LENGTH", "8192"},
             {"OLLAMA_ORIGINS", "https://a.example, https://b.example"},
             {"OLLAMA_MODELS", "/srv/models"}};
  auto c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->host.host, "0.0.0.0");
  EXPECT_EQ(c->host.port, 9999);
  EXPECT_EQ(c->keep_alive, std::chrono::minutes(10));
  EXPECT_EQ(c->max_loaded_models, 7);
  EXPECT_EQ(c->num_parallel, 5);  // NURLLAMA_* wins over OLLAMA_*
  EXPECT_EQ(c->max_queue, 9);
  EXPECT_EQ(c->context_length, 8192);
  EXPECT_EQ(c->origins, (std::vector<std::string>{"https://a.example", "https://b.example"}));
  EXPECT_EQ(c->models_dir, "/srv/models");
}

TEST(Config, FileThenEnvThenFlags) {
  auto path = write_temp("# comment\nnum_parallel = 2\nmax_queue = 11\nkeep_alive = \"-1\"\n");
  ConfigSources src;
  src.env = {{"HOME", "/h"}, {"NURLLAMA_MAX_QUEUE", "22"}};
  src.config_file = path;
  src.flags["max_queue"] = "33";
  auto c = load_config(src);
  std::filesystem::remove(path);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->num_parallel, 2);
  EXPECT_EQ(c->max_queue, 33);
  EXPECT_LT(c->keep_alive.count(), 0);
  EXPECT_EQ(c->config_file, path);
}

TEST(Config, ErrorsNameTheSource) {
  auto path = write_temp("num_parallel = lots\n");
  ConfigSources src;
  src.env = {{"HOME", "/h"}};
  src.config_file = path;
  auto c = load_config(src);
  std::filesystem::remove(path);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().msg.find(path + ":1"), std::string::npos) << c.error().msg;

  ConfigSources env_src;
  env_src.env = {{"HOME", "/h"}, {"OLLAMA_KEEP_ALIVE", "soon"}};
  auto e = load_config(env_src);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().msg.find("OLLAMA_KEEP_ALIVE"), std::string::npos) << e.error().msg;

  ConfigSources flag_src;
  flag_src.env = {{"HOME", "/h"}};
  flag_src.flags["no_such_key"] = "1";
  EXPECT_FALSE(load_config(flag_src).ok());
}

TEST(Config, Sizes) {
  EXPECT_EQ(*parse_size("1024"), 1024u);
  EXPECT_EQ(*parse_size("2KiB"), 2048u);
  EXPECT_EQ(*parse_size("1.5 GB"), 1500000000u);
  EXPECT_FALSE(parse_size("12 parsecs").ok());
}

}  // namespace
}  // namespace nurl

namespace nurl {
namespace {

// `nurllama start` writes <state>/config.json; the hand-written file, environment and flags
// override it, and its errors name it.
TEST(Config, WizardJsonUnderTheOtherSources) {
  auto dir = std::filesystem::temp_directory_path() / ("nurl-home-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"models": "/srv/m", "default_model": "qwen2:latest", "bind": "network",
    "access": "tokens", "port": 8080, "user_max_generations": 2, "trusted_proxies": ["127.0.0.1"]})";
  ConfigSources src;
  src.env = {{"HOME", "/h"}, {"NURLLAMA_HOME", dir.string()}};
  auto c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->host.host, "0.0.0.0");
  EXPECT_EQ(c->host.port, 8080);
  EXPECT_TRUE(c->access_tokens);
  EXPECT_EQ(c->default_model, "qwen2:latest");
  EXPECT_EQ(c->models_dir, "/srv/m");
  EXPECT_EQ(c->state_dir, dir.string());
  EXPECT_EQ(c->user_max_generations, 2);
  EXPECT_EQ(c->trusted_proxies, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(c->wizard_file, (dir / "config.json").string());

  src.env["NURLLAMA_HOST"] = "127.0.0.1:9000";  // the environment wins
  src.flags["access"] = "open";                 // and flags win over everything
  c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->host.host, "127.0.0.1");
  EXPECT_EQ(c->host.port, 9000);
  EXPECT_FALSE(c->access_tokens);

  std::ofstream(dir / "config.json") << R"({"bind": "everywhere"})";
  c = load_config(src);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().msg.find("config.json"), std::string::npos) << c.error().msg;
  EXPECT_NE(c.error().msg.find("localhost or network"), std::string::npos) << c.error().msg;
  std::ofstream(dir / "config.json") << R"({"colour": "blue"})";
  c = load_config(src);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().msg.find("unknown key \"colour\""), std::string::npos) << c.error().msg;
  std::ofstream(dir / "config.json") << "{not json";
  EXPECT_FALSE(load_config(src).ok());
  std::filesystem::remove_all(dir);
}

TEST(Config, ConnectionAndWebKnobs) {
  ConfigSources src;
  src.env = {{"HOME", "/h"}, {"NURLLAMA_HEADER_TIMEOUT", "2s"}, {"NURLLAMA_MAX_CONNECTIONS_PER_PEER", "8"},
             {"NURLLAMA_WEB_MAX_MESSAGE", "1KiB"}, {"NURLLAMA_ACCESS", "tokens"}};
  auto c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->header_timeout, std::chrono::seconds(2));
  EXPECT_EQ(c->max_connections_per_peer, 8);
  EXPECT_EQ(c->web_max_message, 1024u);
  EXPECT_TRUE(c->access_tokens);
  src.env["NURLLAMA_ACCESS"] = "maybe";
  EXPECT_FALSE(load_config(src).ok());
  src.env.erase("NURLLAMA_ACCESS");
  src.env["NURLLAMA_HEADER_TIMEOUT"] = "0s";
  EXPECT_FALSE(load_config(src).ok());
}

}  // namespace
}  // namespace nurl

namespace nurl {
namespace {

// cpu_tier caps the kernel tier: the CPU's best by default, any tier by name, an unknown name is
// an error that lists the names.
TEST(Config, CpuTier) {
  ConfigSources src;
  src.env = {{"HOME", "/h"}};
  auto c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->cpu_tier, CpuTier::avx512);
  src.env["NURLLAMA_CPU_TIER"] = "avx2";
  c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->cpu_tier, CpuTier::avx2);
  src.flags["cpu_tier"] = "scalar";
  c = load_config(src);
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->cpu_tier, CpuTier::scalar);
  src.flags["cpu_tier"] = "sse9";
  c = load_config(src);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().msg.find("avx_vnni"), std::string::npos) << c.error().msg;
}

}  // namespace
}  // namespace nurl
