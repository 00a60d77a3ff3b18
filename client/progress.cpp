#include "client/progress.h"

#include "client/format.h"

namespace nurl::client {

void ProgressPrinter::end_line() {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
}

void ProgressPrinter::on_event(const nlohmann::json& ev) {
  const std::string status = ev.value("status", "");
  const uint64_t total = ev.value("total", uint64_t(0));
  const uint64_t completed = ev.value("completed", uint64_t(0));
  const bool new_status = status != status_;
  if (new_status) {
    end_line();
    status_ = status;
    last_decile_ = -1;
    speed_base_bytes_ = completed;
    speed_base_time_ = std::chrono::steady_clock::now();
    bps_ = 0;
  }
  if (total == 0) {
    if (new_status) {
      std::fprintf(out_, "%s", status.c_str());
      line_open_ = true;
      if (!tty_) end_line();
    }
    std::fflush(out_);
    return;
  }
  // Speed over the time since this transfer's first event, smoothed.
  auto now = std::chrono::steady_clock::now();
  double dt = std::chrono::duration<double>(now - speed_base_time_).count();
  if (dt > 0.5 && completed > speed_base_bytes_) bps_ = double(completed - speed_base_bytes_) / dt;
  if (tty_) {
    std::fprintf(out_, "\r%s\x1b[K", progress_line(status, completed, total, bps_).c_str());
    line_open_ = true;
  } else {
    int decile = int(completed * 10 / total);
    if (decile != last_decile_) {
      last_decile_ = decile;
      std::fprintf(out_, "%s %d%% (%s/%s)\n", status.c_str(), decile * 10, human_bytes(completed).c_str(),
                   human_bytes(total).c_str());
    }
  }
  std::fflush(out_);
}

void ProgressPrinter::finish() {
  end_line();
  std::fflush(out_);
}

}  // namespace nurl::client
