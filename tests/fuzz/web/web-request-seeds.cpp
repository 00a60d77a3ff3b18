// Seed corpus for web_request_fuzz: `web_request_fuzz_seeds <out-dir> <testdata-dir>`.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::filesystem::create_directories(argv[1]);
  const std::vector<std::string> seeds = {
      "GET\n/api/tags\n127.0.0.1:11434\n\nBearer good-chat\n\n\n",
      "POST\n/api/pull\nbox:80\n\nBearer good-chat\napplication/json\n\n",
      "POST\n/web/chat\nbox:11434\nhttp://box:11434\n\napplication/json; charset=utf-8\n\n",
      "DELETE\n/web/conversations/abc\nbox\nhttps://evil.example\n\ntext/plain\n\n",
      "OPTIONS\n/v1/chat/completions\nlocalhost\nhttp://localhost:3000\n\n\n\n\x01",
      "PATCH\n/web/conversations/x\n[::1]:8080\nhttp://[::1]:8080\nbearer good-admin\napplication/json\nunix\n",
      "GET\n/\nevil.com\nnull\nBasic abc\n\n\n\x01",
  };
  for (size_t i = 0; i < seeds.size(); ++i) std::ofstream(std::string(argv[1]) + "/seed-" + std::to_string(i)) << seeds[i];
  return 0;
}
