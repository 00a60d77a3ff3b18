// GGUF header facts for the manifest: header check (cheap, at every resolve) and the model
// details /api/tags reports (full metadata parse, once when a model is added).
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "engine/gguf/gguf.h"
#include "store/fs-util.h"
#include "store/store.h"

namespace nurl {
namespace {

// general.file_type values as written by GGUF converters/quantisers (the GGUF spec's list).
std::string file_type_name(uint32_t t) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {0, "F32"},     {1, "F16"},     {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
      {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
      {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"}, {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"},
      {21, "Q2_K_S"}, {22, "IQ3_XS"}, {23, "IQ3_XXS"}, {24, "IQ1_S"}, {25, "IQ4_NL"}, {26, "IQ3_S"},
      {27, "IQ3_M"},  {28, "IQ2_S"},  {29, "IQ2_M"},  {30, "IQ4_XS"}, {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},  {37, "TQ2_0"},
  };
  for (auto [id, name] : kNames)
    if (id == t) return name;
  return "";
}

std::string human_count(uint64_t n) {
  static constexpr std::pair<double, char> kUnits[] = {{1e12, 'T'}, {1e9, 'B'}, {1e6, 'M'}, {1e3, 'K'}};
  for (auto [scale, unit] : kUnits) {
    if (double(n) >= scale) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f%c", double(n) / scale, unit);
      return buf;
    }
  }
  return std::to_string(n);
}

}  // namespace

Result<void> check_gguf_header(const std::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "opening", file);
  unsigned char h[8] = {};
  ssize_t n = ::pread(fd, h, sizeof h, 0);
  ::close(fd);
  if (n != ssize_t(sizeof h) || std::memcmp(h, "GGUF", 4) != 0)
    return Error(Code::corrupt, file.string() + ": not a GGUF file (no \"GGUF\" magic at the start)");
  uint32_t version = uint32_t(h[4]) | uint32_t(h[5]) << 8 | uint32_t(h[6]) << 16 | uint32_t(h[7]) << 24;
  if (version != 2 && version != 3)
    return Error(Code::corrupt, file.string() + ": unsupported GGUF version " + std::to_string(version));
  return ok();
}

Result<ModelDetails> read_model_details(const std::filesystem::path& path) {
  auto f = gguf::File::open(path.string());
  if (!f.ok()) return Error(Code::corrupt, "not a usable GGUF file: " + f.error().msg);
  ModelDetails d;
  if (auto arch = f->get_string_or("general.architecture", ""); arch.ok()) d.family = *arch;
  uint64_t n_params = 0;
  std::map<GgmlType, uint64_t> bytes_by_type;
  for (const auto& t : f->tensors()) {
    n_params += t.n_elements;
    bytes_by_type[t.type] += t.n_bytes;
  }
  d.parameter_size = human_count(n_params);
  auto ft = f->get_u32_or("general.file_type", UINT32_MAX);
  if (ft.ok() && *ft != UINT32_MAX) d.quantization_level = file_type_name(*ft);
  if (d.quantization_level.empty() && !bytes_by_type.empty()) {
    // No (known) file type: report the type holding most of the bytes.
    auto best = bytes_by_type.begin();
    for (auto it = bytes_by_type.begin(); it != bytes_by_type.end(); ++it)
      if (it->second > best->second) best = it;
    std::string n(type_name(best->first));
    for (char& c : n) c = char(std::toupper(static_cast<unsigned char>(c)));
    d.quantization_level = n;
  }
  return d;
}

}  // namespace nurl
