// Job state files (see job-file.h).
#include "jobs/job-file.h"

#include "api/json-fields.h"
#include "core/json-text.h"

namespace nurl {

bool valid_job_id(std::string_view id) {
  if (id.empty() || id.size() > 96) return false;
  for (char c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  return true;
}

std::string encode_job_file(const JobSnapshot& s, const nlohmann::json& request, const std::string& key,
                            const nlohmann::json& saved, const std::string& created_at, const std::string& updated_at) {
  nlohmann::json j = s.to_json();
  j["request"] = request;
  j["key"] = key;
  if (!saved.is_null()) j["saved"] = saved;
  j["created_at"] = created_at;
  j["updated_at"] = updated_at;
  return dump_json(j, 2, InvalidUtf8::replace) + "\n";
}

Result<JobFile> decode_job_file(std::string_view text, std::string_view expected_id) {
  auto j = parse_json(text);
  if (j.is_discarded() || !j.is_object()) return Error(Code::corrupt, "not a JSON object");
  JobFile f;
  f.id = jf::str(j, "id");
  if (!valid_job_id(f.id)) return Error(Code::corrupt, "invalid job id \"" + f.id.substr(0, 100) + "\"");
  if (f.id != expected_id) return Error(Code::corrupt, "the file of job " + std::string(expected_id) + " names " + f.id);
  auto req = j.find("request");
  if (req == j.end() || !req->is_object()) return Error(Code::corrupt, "no request");
  f.request = *req;
  f.kind = jf::str(j, "kind", "pull");
  f.state = jf::str(j, "state");
  if (f.state != "queued" && f.state != "running" && f.state != "succeeded" && f.state != "failed" &&
      f.state != "cancelled")
    return Error(Code::corrupt, "unknown state \"" + f.state.substr(0, 40) + "\"");
  f.created_at = jf::str(j, "created_at");
  f.error = jf::str(j, "error");
  if (auto s = j.find("saved"); s != j.end() && !s->is_null()) f.saved = *s;
  if (auto p = j.find("progress"); p != j.end() && p->is_object())
    f.progress = ProgressEvent{jf::str(*p, "status"), jf::str(*p, "digest"), jf::u64(*p, "total"),
                               jf::u64(*p, "completed"), jf::str(*p, "stage")};
  return f;
}

}  // namespace nurl
