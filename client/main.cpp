// nurllama entry point: forwards commands to nurllamad. Commands arrive with the daemon issue.
#include <cstdio>
#include <cstring>

#include "api/version.h"

int main(int argc, char** argv) {
  if (argc >= 2 && (std::strcmp(argv[1], "version") == 0 || std::strcmp(argv[1], "--version") == 0)) {
    std::printf("nurllama %s\n", nurl::version_string());
    return 0;
  }
  std::fprintf(stderr, "usage: nurllama version\n");
  return 2;
}
