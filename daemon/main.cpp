// nurllamad entry point. The server itself arrives with the daemon issue; today it can inspect a model.
#include <cstdio>
#include <cstring>

#include "api/version.h"
#include "engine/gguf/gguf.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("nurllamad %s\n", nurl::version_string());
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "inspect") == 0) {
    auto f = nurl::gguf::File::open(argv[2]);
    if (!f.ok()) {
      std::fprintf(stderr, "nurllamad: %s\n", f.error().msg.c_str());
      return 1;
    }
    std::fputs(nurl::gguf::describe(*f).c_str(), stdout);
    return 0;
  }
  std::fprintf(stderr, "usage: nurllamad --version | nurllamad inspect FILE.gguf\n");
  return 2;
}
