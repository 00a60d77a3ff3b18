// The job state file <home>/jobs/<id>.json, what a restart reads back:
//   {"id":"convert-…","kind":"convert","source":<key>,"name":…,"state":"running",
//    "progress":{…last event…},"error":…,"created_at":…,"updated_at":…,
//    "key":<attach key>,"request":{…the kind's normalised request…},"saved":{…durable state…}}
// decode_job_file() takes any bytes (a file cut short, edited by hand, of an older daemon) and
// returns what it can trust or an error naming why, never throws.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "jobs/job.h"

namespace nurl {

struct JobFile {
  std::string id;
  std::string kind = "pull";  // files of daemons before other kinds name none
  std::string state;          // "queued", "running", "succeeded", "failed", "cancelled"
  std::string created_at;
  std::string error;
  nlohmann::json request = nlohmann::json::object();
  nlohmann::json saved;       // null when the kind saved nothing
  std::optional<ProgressEvent> progress;
};

// A job id as the manager makes them ("<kind>-<hex>"): 1-96 of [A-Za-z0-9_-].
bool valid_job_id(std::string_view id);

std::string encode_job_file(const JobSnapshot& s, const nlohmann::json& request, const std::string& key,
                            const nlohmann::json& saved, const std::string& created_at, const std::string& updated_at);
// `expected_id`: the file's stem, which the id inside must equal.
Result<JobFile> decode_job_file(std::string_view text, std::string_view expected_id);

}  // namespace nurl
