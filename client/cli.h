// nurllama's command line (client/cli.cpp).
#pragma once

namespace nurl::client {

// Parses argv, runs the command against nurllamad and returns the exit status.
int run_cli(int argc, char** argv);

}  // namespace nurl::client
