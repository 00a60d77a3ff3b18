// The logger's journal sink: one sd_journal_send(3) entry per line, with PRIORITY= (err for
// errors, warning, info, debug), SYSLOG_IDENTIFIER=nurllamad and the line's structured fields
// MODEL=, REQUEST_ID=, CLIENT= — so `journalctl -u nurllamad MODEL=llama3 -p err` works. The
// daemon picks it when stderr is the journal (stderr_is_journal()).
#pragma once

#include "core/log.h"

namespace nurl::service {

Logger::FieldSink journal_sink();

}  // namespace nurl::service
