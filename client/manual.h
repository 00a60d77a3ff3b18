// The parts of nurllama(1) that are not in the option definitions: environment, files, exit
// status. The rest of the page is generated from the commands themselves (cli/cli-docs.h).
#pragma once

#include "cli/cli-docs.h"

namespace nurl::client {

cli::Manual client_manual();

}  // namespace nurl::client
