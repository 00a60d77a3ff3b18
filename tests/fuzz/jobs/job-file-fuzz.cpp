// libFuzzer target for job state files. Any input gives a JobFile or an Error with a message
// (never a crash or a sanitizer report); an accepted file keeps its promises (a safe id equal to
// the file's name, a known state, an object request) and re-encodes to the same job.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "jobs/job-file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The id the file claims, as the manager would see it in the file's name.
  std::string id;
  if (auto p = text.find("\"id\":\""); p != std::string_view::npos) {
    auto e = text.find('"', p + 6);
    if (e != std::string_view::npos) id = std::string(text.substr(p + 6, e - p - 6));
  }
  auto f = nurl::decode_job_file(text, id);
  if (!f.ok()) {
    if (f.error().msg.empty()) std::abort();
    return 0;
  }
  if (!nurl::valid_job_id(f->id) || f->id != id || !f->request.is_object()) std::abort();
  nurl::JobSnapshot s;
  s.id = f->id;
  s.kind = f->kind;
  s.state = f->state == "queued"      ? nurl::JobState::queued
            : f->state == "running"   ? nurl::JobState::running
            : f->state == "succeeded" ? nurl::JobState::succeeded
            : f->state == "failed"    ? nurl::JobState::failed
                                      : nurl::JobState::cancelled;
  if (nurl::job_state_name(s.state) != f->state) std::abort();
  s.error = f->error;
  s.created_at = f->created_at;
  if (f->progress) s.events.push_back(*f->progress);
  auto again = nurl::decode_job_file(nurl::encode_job_file(s, f->request, "key", f->saved, f->created_at, "now"), id);
  if (!again.ok() || again->id != f->id || again->kind != f->kind || again->state != f->state ||
      again->request != f->request || again->saved != f->saved || again->error != f->error)
    std::abort();
  return 0;
}
