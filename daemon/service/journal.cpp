#include "service/journal.h"

#include <sys/uio.h>

// The location would be this sink's, the same for every line: leave CODE_FILE= and friends out.
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include <cstdio>
#include <string>
#include <vector>

namespace nurl::service {

Logger::FieldSink journal_sink() {
  return [](LogLevel l, std::string_view msg, const LogFields& f) {
    std::vector<std::string> items;
    items.reserve(6);
    items.push_back("MESSAGE=" + std::string(msg));
    items.push_back("PRIORITY=" + std::to_string(syslog_priority(l)));
    items.push_back("SYSLOG_IDENTIFIER=nurllamad");
    if (!f.model.empty()) items.push_back("MODEL=" + std::string(f.model));
    if (!f.request_id.empty()) items.push_back("REQUEST_ID=" + std::string(f.request_id));
    if (!f.client.empty()) items.push_back("CLIENT=" + std::string(f.client));
    std::vector<iovec> iov;
    iov.reserve(items.size());
    for (auto& s : items) iov.push_back(iovec{s.data(), s.size()});
    if (sd_journal_sendv(iov.data(), static_cast<int>(iov.size())) < 0) {
      // The journal went away: stderr (still the journal's stream, or nothing) as a last resort.
      std::fprintf(stderr, "<%d>%s\n", syslog_priority(l), with_fields_text(msg, f).c_str());
      std::fflush(stderr);
    }
  };
}

}  // namespace nurl::service
