// Safetensors header parsing with every claim checked (see safetensors.h).
#include "engine/convert/safetensors.h"

#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/json-text.h"

namespace nurl::convert {

namespace {

using nlohmann::json;

struct DtypeRow {
  std::string_view name;
  StDtype dtype;
  size_t size;
};
constexpr DtypeRow kDtypes[] = {
    {"F64", StDtype::F64, 8},   {"F32", StDtype::F32, 4},   {"F16", StDtype::F16, 2},
    {"BF16", StDtype::BF16, 2}, {"I64", StDtype::I64, 8},   {"I32", StDtype::I32, 4},
    {"I16", StDtype::I16, 2},   {"I8", StDtype::I8, 1},     {"U8", StDtype::U8, 1},
    {"BOOL", StDtype::BOOL, 1}, {"F8_E4M3", StDtype::F8_E4M3, 1}, {"F8_E5M2", StDtype::F8_E5M2, 1},
};

std::string shape_str(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Result<void> parse_entry(const std::string& where, const std::string& name, const json& e, uint64_t data_size,
                         StTensor& t) {
  const std::string at = where + ": tensor " + name;
  if (!e.is_object()) return Error(Code::corrupt, at + ": header entry is not an object");
  auto dt = e.find("dtype");
  if (dt == e.end() || !dt->is_string()) return Error(Code::corrupt, at + ": no \"dtype\" string");
  const std::string ds = dt->get<std::string>();
  const DtypeRow* row = nullptr;
  for (const auto& r : kDtypes)
    if (r.name == ds) row = &r;
  if (!row) return Error(Code::unsupported, at + ": unknown dtype \"" + ds.substr(0, 32) + "\"");
  t.dtype = row->dtype;

  auto sh = e.find("shape");
  if (sh == e.end() || !sh->is_array()) return Error(Code::corrupt, at + ": no \"shape\" array");
  if (sh->size() > kMaxDims) return Error(Code::corrupt, at + ": " + std::to_string(sh->size()) + " dimensions");
  uint64_t n = 1;
  for (const auto& d : *sh) {
    if (!d.is_number_unsigned()) return Error(Code::corrupt, at + ": shape holds a value that is not a size");
    const uint64_t v = d.get<uint64_t>();
    if (v > kMaxDim) return Error(Code::corrupt, at + ": dimension " + std::to_string(v) + " is absurd");
    t.shape.push_back(v);
    if (v != 0 && n > kMaxElements / v)  // checked before multiplying: no overflow
      return Error(Code::corrupt, at + ": shape " + shape_str(t.shape) + "... has more than 2^40 elements");
    n *= v;
  }
  t.n_elements = n;

  auto off = e.find("data_offsets");
  if (off == e.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    return Error(Code::corrupt, at + ": \"data_offsets\" must be two sizes [begin, end]");
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  const std::string range = "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
  if (t.begin > t.end) return Error(Code::corrupt, at + ": data_offsets " + range + " end before they begin");
  if (t.end > data_size)
    return Error(Code::corrupt, at + ": data_offsets " + range + " reach past the end of the data (" +
                                    std::to_string(data_size) + " bytes; the file is truncated or the header lies)");
  const uint64_t want = n * row->size;
  if (t.end - t.begin != want)
    return Error(Code::corrupt, at + ": data_offsets " + range + " hold " + std::to_string(t.end - t.begin) +
                                    " bytes, but " + ds + " " + shape_str(t.shape) + " needs " + std::to_string(want));
  return {};
}

}  // namespace

std::string_view dtype_name(StDtype d) {
  for (const auto& r : kDtypes)
    if (r.dtype == d) return r.name;
  return "?";
}

size_t dtype_size(StDtype d) {
  for (const auto& r : kDtypes)
    if (r.dtype == d) return r.size;
  return 0;
}

const StTensor* StFile::find(std::string_view n) const {
  auto it = index.find(std::string(n));
  return it == index.end() ? nullptr : &tensors[it->second];
}

void StFile::release(const StTensor& t, uint64_t offset, uint64_t n) const {
  if (map) map->release(size_t(data_start + t.begin + offset), size_t(n));
}

Result<StFile> parse_safetensors(std::span<const uint8_t> bytes, const std::string& name) {
  StFile f;
  f.path = name;
  f.name = name.substr(name.find_last_of('/') + 1);
  const std::string& where = f.path;
  if (bytes.size() < 8)
    return Error(Code::corrupt, where + ": " + std::to_string(bytes.size()) + " bytes, too short for a safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | bytes[size_t(i)];
  if (n > kMaxHeaderBytes)
    return Error(Code::corrupt, where + ": header length " + std::to_string(n) + " at offset 0 is over the 100 MB limit");
  if (n > bytes.size() - 8)
    return Error(Code::corrupt, where + ": header length " + std::to_string(n) + " at offset 0 reaches past the end of the file (" +
                                    std::to_string(bytes.size()) + " bytes)");
  if (n < 2 || bytes[8] != '{')
    return Error(Code::corrupt, where + ": the header at offset 8 is not a JSON object");
  f.data_start = 8 + n;
  const uint64_t data_size = bytes.size() - f.data_start;
  const auto* h = reinterpret_cast<const char*>(bytes.data() + 8);
  json header = parse_json(std::string_view(h, n));
  if (header.is_discarded() || !header.is_object())
    return Error(Code::corrupt, where + ": the header (offset 8, " + std::to_string(n) + " bytes) is not valid JSON");

  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it->is_object()) return Error(Code::corrupt, where + ": __metadata__ is not an object");
      for (auto m = it->begin(); m != it->end(); ++m)
        if (m->is_string()) f.metadata[m.key()] = m->get<std::string>();
      continue;
    }
    StTensor t;
    t.name = it.key();
    NURL_TRY(parse_entry(where, t.name, *it, data_size, t));
    t.data = bytes.data() + f.data_start + t.begin;
    f.index.emplace(t.name, f.tensors.size());
    f.tensors.push_back(std::move(t));
  }

  // No two tensors may share bytes (empty tensors take none).
  std::vector<const StTensor*> by_offset;
  for (const auto& t : f.tensors)
    if (t.end > t.begin) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const StTensor* a, const StTensor* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const StTensor& a = *by_offset[i - 1];
    const StTensor& b = *by_offset[i];
    if (b.begin < a.end)
      return Error(Code::corrupt, where + ": tensors " + a.name + " [" + std::to_string(a.begin) + ", " +
                                      std::to_string(a.end) + ") and " + b.name + " [" + std::to_string(b.begin) +
                                      ", " + std::to_string(b.end) + ") overlap");
  }
  return f;
}

Result<std::shared_ptr<const StFile>> open_safetensors(const std::string& path) {
  NURL_ASSIGN(MmapFile m, MmapFile::open(path));
  auto map = std::make_shared<MmapFile>(std::move(m));
  NURL_ASSIGN(StFile f, parse_safetensors(map->bytes(), path));
  f.map = std::move(map);
  return std::make_shared<const StFile>(std::move(f));
}

}  // namespace nurl::convert
