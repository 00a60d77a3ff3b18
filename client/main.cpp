// nurllama: the thin client. Every command is forwarded to nurllamad (Unix socket by default,
// TCP with NURLLAMA_HOST/OLLAMA_HOST) and its results are streamed back.
#include "client/cli.h"

int main(int argc, char** argv) { return nurl::client::run_cli(argc, argv); }
