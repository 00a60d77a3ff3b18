#include "engine/gguf/gguf.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <sstream>

namespace nurl::gguf {

namespace {

constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxStringLen = uint64_t(1) << 30;  // 1 GiB: far above any real key or value

std::string at_offset(uint64_t off) { return "offset " + std::to_string(off); }

// A string value for display: quoted, control bytes escaped, cut after max_bytes on a UTF-8
// character boundary (so a dump of a chat template stays one line of valid text).
std::string quote(const std::string& s, size_t max_bytes) {
  size_t n = s.size();
  if (n > max_bytes) {
    n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;  // not inside a sequence
  }
  std::string out = "\"";
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += char(c);
        }
    }
  }
  out += '"';
  if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string shape_string(const TensorInfo& t) {
  std::string s;
  for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? " x " : "") + std::to_string(t.ne[d]);
  return s;
}

std::string type_string(const Value& v) {
  if (const Array* a = v.get_if<Array>())
    return "[" + std::string(value_type_name(a->elem_type)) + "; " + std::to_string(a->items.size()) + "]";
  return std::string(value_type_name(v.type()));
}

std::string human_bytes(uint64_t n) {
  std::ostringstream os;
  os.precision(1);
  if (n >= (uint64_t(1) << 30)) os << std::fixed << double(n) / double(uint64_t(1) << 30) << " GiB";
  else if (n >= (uint64_t(1) << 20)) os << std::fixed << double(n) / double(uint64_t(1) << 20) << " MiB";
  else if (n >= 1024) os << std::fixed << double(n) / 1024.0 << " KiB";
  else os << n << " B";
  return os.str();
}

}  // namespace

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::u8: return "u8";
    case ValueType::i8: return "i8";
    case ValueType::u16: return "u16";
    case ValueType::i16: return "i16";
    case ValueType::u32: return "u32";
    case ValueType::i32: return "i32";
    case ValueType::f32: return "f32";
    case ValueType::boolean: return "bool";
    case ValueType::string: return "string";
    case ValueType::array: return "array";
    case ValueType::u64: return "u64";
    case ValueType::i64: return "i64";
    case ValueType::f64: return "f64";
  }
  return "?";
}

std::optional<int64_t> Value::as_int() const {
  return std::visit(
      [](const auto& x) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, uint64_t>) {
          if (x > uint64_t(std::numeric_limits<int64_t>::max())) return std::nullopt;
          return int64_t(x);
        } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          return int64_t(x);
        } else {
          return std::nullopt;
        }
      },
      v);
}

std::optional<double> Value::as_number() const {
  if (auto f = get_if<float>()) return double(*f);
  if (auto d = get_if<double>()) return *d;
  if (auto u = get_if<uint64_t>()) return double(*u);
  if (auto i = as_int()) return double(*i);
  return std::nullopt;
}

std::string Value::to_string(size_t max_items) const {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          os << quote(x, 80);
        } else if constexpr (std::is_same_v<T, Array>) {
          os << '[';
          for (size_t i = 0; i < x.items.size() && i < max_items; ++i) {
            if (i) os << ", ";
            os << x.items[i].to_string(max_items);
          }
          if (x.items.size() > max_items) os << ", ... (" << x.items.size() << " items)";
          os << ']';
        } else if constexpr (std::is_same_v<T, bool>) {
          os << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
          os << int(x);
        } else {
          os << x;
        }
      },
      v);
  return os.str();
}

// Parser: a bounds-checked cursor over the file bytes.
class Parser {
 public:
  explicit Parser(std::span<const uint8_t> b) : b_(b) {}

  Result<File> run(File f) {
    uint32_t magic = 0;
    NURL_TRY(read(magic, "magic"));
    if (magic != kMagic) {
      std::string seen(4, '?');
      std::memcpy(seen.data(), &magic, 4);
      for (char& c : seen) c = (c >= 0x20 && c < 0x7f) ? c : '?';  // printable only
      return Error(Code::corrupt, "not a GGUF file (magic at offset 0 is \"" + seen + "\", want \"GGUF\")");
    }
    NURL_TRY(read(f.version_, "version"));
    if (f.version_ == 1) return Error(Code::unsupported, "GGUF version 1 is not supported (re-convert the model)");
    if (f.version_ != 2 && f.version_ != 3) {
      if (f.version_ == 0x02000000 || f.version_ == 0x03000000)
        return Error(Code::unsupported, "big-endian GGUF files are not supported");
      return Error(Code::unsupported, "unknown GGUF version " + std::to_string(f.version_));
    }
    uint64_t n_tensors = 0, n_kv = 0;
    NURL_TRY(read(n_tensors, "tensor count"));
    NURL_TRY(read(n_kv, "metadata count"));
    // Bound the counts by the bytes left before reserving anything: each kv takes at least
    // 8 (key length) + 4 (type) + 1 bytes, each tensor info at least 8 + 4 + 8 + 4 + 8.
    if (n_kv > remaining() / 13)
      return Error(Code::corrupt, "metadata count " + std::to_string(n_kv) + " at offset 16 exceeds what the " +
                                      std::to_string(b_.size()) + "-byte file can hold");
    if (n_tensors > remaining() / 32)
      return Error(Code::corrupt, "tensor count " + std::to_string(n_tensors) + " at offset 8 exceeds what the " +
                                      std::to_string(b_.size()) + "-byte file can hold");

    f.kv_.reserve(n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
      const uint64_t at = pos_;
      KeyValue kv;
      NURL_TRY(read_string(kv.key, "key of metadata entry " + std::to_string(i)));
      uint32_t type = 0;
      NURL_TRY(read(type, "type of key '" + kv.key + "'"));
      auto r = read_value(type, kv.key, 0);
      if (!r.ok()) return r.error();
      kv.value = std::move(r).value();
      if (f.kv_index_.count(kv.key))
        return Error(Code::corrupt, "duplicate metadata key '" + kv.key + "' at " + at_offset(at));
      f.kv_index_.emplace(kv.key, f.kv_.size());
      f.kv_.push_back(std::move(kv));
    }

    if (const Value* a = f.find("general.alignment")) {
      auto v = a->as_int();
      if (!v || *v <= 0 || *v > (1 << 20) || (*v & (*v - 1)) != 0)
        return Error(Code::corrupt, "general.alignment must be a power of two up to 2^20, got " + a->to_string() +
                                        " (" + std::string(value_type_name(a->type())) + ")");
      f.alignment_ = uint64_t(*v);
    }

    f.tensors_.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
      const uint64_t at = pos_;
      TensorInfo t;
      NURL_TRY(read_string(t.name, "name of tensor " + std::to_string(i)));
      const std::string where = "tensor '" + t.name + "' (info at " + at_offset(at) + ")";
      NURL_TRY(read(t.n_dims, where + " n_dims"));
      if (t.n_dims == 0 || t.n_dims > kMaxDims)
        return Error(Code::corrupt, where + ": n_dims " + std::to_string(t.n_dims) + " is not in 1..4");
      uint64_t n = 1;
      for (uint32_t d = 0; d < t.n_dims; ++d) {
        NURL_TRY(read(t.ne[d], where + " shape"));
        if (t.ne[d] == 0 || t.ne[d] > uint64_t(std::numeric_limits<int64_t>::max()))
          return Error(Code::corrupt, where + ": dimension " + std::to_string(d) + " is " + std::to_string(t.ne[d]));
        if (n > uint64_t(std::numeric_limits<int64_t>::max()) / t.ne[d])
          return Error(Code::corrupt, where + ": element count overflows");
        n *= t.ne[d];
      }
      t.n_elements = n;
      uint32_t type = 0;
      NURL_TRY(read(type, where + " type"));
      auto ti = type_info(type);
      if (!ti) return Error(Code::unsupported, where + ": unknown tensor type id " + std::to_string(type));
      t.type = ti->type;
      if (t.ne[0] % ti->block_elems != 0)
        return Error(Code::corrupt, where + ": row length " + std::to_string(t.ne[0]) + " is not a multiple of " +
                                        std::string(ti->name) + "'s block size " + std::to_string(ti->block_elems));
      const uint64_t n_blocks = n / ti->block_elems;
      if (n_blocks > std::numeric_limits<uint64_t>::max() / ti->block_bytes)
        return Error(Code::corrupt, where + ": byte size overflows");
      t.n_bytes = n_blocks * ti->block_bytes;
      NURL_TRY(read(t.offset, where + " offset"));
      if (f.tensor_index_.count(t.name))
        return Error(Code::corrupt, "duplicate tensor name '" + t.name + "' (info at " + at_offset(at) + ")");
      f.tensor_index_.emplace(t.name, f.tensors_.size());
      f.tensors_.push_back(std::move(t));
    }

    // The data section starts at the next multiple of the alignment.
    uint64_t data = (pos_ + f.alignment_ - 1) / f.alignment_ * f.alignment_;
    if (f.tensors_.empty() && data > b_.size()) data = b_.size();  // vocab-only files may end unpadded
    if (data > b_.size())
      return Error(Code::corrupt, "file ends at " + std::to_string(b_.size()) + ", before the data section at " +
                                      at_offset(data) + " (truncated?)");
    f.data_offset_ = data;
    const uint64_t data_size = b_.size() - data;
    for (auto& t : f.tensors_) {
      if (t.offset % f.alignment_ != 0)
        return Error(Code::corrupt, "tensor '" + t.name + "': offset " + std::to_string(t.offset) +
                                        " is not aligned to " + std::to_string(f.alignment_));
      if (t.offset > data_size || t.n_bytes > data_size - t.offset)
        return Error(Code::corrupt, "tensor '" + t.name + "': data [" + std::to_string(t.offset) + ", +" +
                                        std::to_string(t.n_bytes) + ") leaves the file: its data section (at " +
                                        at_offset(data) + ") holds " + std::to_string(data_size) +
                                        " bytes (truncated file?)");
      t.data = b_.data() + data + t.offset;
    }
    return f;
  }

 private:
  uint64_t remaining() const { return b_.size() - pos_; }

  template <typename T>
  Result<void> read(T& out, const std::string& what) {
    if (remaining() < sizeof(T))
      return Error(Code::corrupt, "unexpected end of file reading " + what + " at " + at_offset(pos_));
    std::memcpy(&out, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return {};
  }

  Result<void> read_string(std::string& out, const std::string& what) {
    uint64_t len = 0;
    NURL_TRY(read(len, what + " length"));
    if (len > remaining() || len > kMaxStringLen)
      return Error(Code::corrupt, what + ": string length " + std::to_string(len) + " at " + at_offset(pos_ - 8) +
                                      " runs past the end of the file");
    out.assign(reinterpret_cast<const char*>(b_.data() + pos_), len);
    pos_ += len;
    return {};
  }

  template <typename T>
  Result<Value> scalar(const std::string& key) {
    T x{};
    NURL_TRY(read(x, "value of '" + key + "'"));
    return Value{Value::Storage(x)};
  }

  Result<Value> read_value(uint32_t type, const std::string& key, int depth) {
    switch (static_cast<ValueType>(type)) {
      case ValueType::u8: return scalar<uint8_t>(key);
      case ValueType::i8: return scalar<int8_t>(key);
      case ValueType::u16: return scalar<uint16_t>(key);
      case ValueType::i16: return scalar<int16_t>(key);
      case ValueType::u32: return scalar<uint32_t>(key);
      case ValueType::i32: return scalar<int32_t>(key);
      case ValueType::f32: return scalar<float>(key);
      case ValueType::u64: return scalar<uint64_t>(key);
      case ValueType::i64: return scalar<int64_t>(key);
      case ValueType::f64: return scalar<double>(key);
      case ValueType::boolean: {
        uint8_t x = 0;
        NURL_TRY(read(x, "value of '" + key + "'"));
        if (x > 1) return Error(Code::corrupt, "key '" + key + "': bool value " + std::to_string(x) + " at " + at_offset(pos_ - 1));
        return Value{Value::Storage(x != 0)};
      }
      case ValueType::string: {
        std::string s;
        NURL_TRY(read_string(s, "value of '" + key + "'"));
        return Value{Value::Storage(std::move(s))};
      }
      case ValueType::array: {
        if (depth >= kMaxArrayDepth)
          return Error(Code::corrupt, "key '" + key + "': arrays nested too deeply (more than " +
                                          std::to_string(kMaxArrayDepth) + " levels) at " + at_offset(pos_));
        uint32_t elem = 0;
        uint64_t count = 0;
        NURL_TRY(read(elem, "array type of '" + key + "'"));
        NURL_TRY(read(count, "array length of '" + key + "'"));
        if (elem > uint32_t(ValueType::f64))
          return Error(Code::corrupt, "key '" + key + "': unknown array element type " + std::to_string(elem) + " at " +
                                          at_offset(pos_ - 12));
        // Every element takes at least one byte (strings and arrays at least 8): bound the count
        // by the bytes left before allocating anything.
        const uint64_t min_size = elem == uint32_t(ValueType::string) || elem == uint32_t(ValueType::array) ? 8 : 1;
        if (count > remaining() / min_size)
          return Error(Code::corrupt, "key '" + key + "': array length " + std::to_string(count) + " at " +
                                          at_offset(pos_ - 8) + " exceeds the file");
        Array arr;
        arr.elem_type = static_cast<ValueType>(elem);
        arr.items.reserve(count);
        for (uint64_t i = 0; i < count; ++i) {
          auto r = read_value(elem, key, depth + 1);
          if (!r.ok()) return r.error();
          arr.items.push_back(std::move(r).value());
        }
        return Value{Value::Storage(std::move(arr))};
      }
    }
    return Error(Code::corrupt, "key '" + key + "': unknown value type " + std::to_string(type) + " at " + at_offset(pos_ - 4));
  }

  std::span<const uint8_t> b_;
  uint64_t pos_ = 0;
};

Result<File> File::parse(std::span<const uint8_t> bytes) {
  File f;
  f.bytes_ = bytes;
  return Parser(bytes).run(std::move(f));
}

Result<File> File::open(const std::string& path) {
  auto m = MmapFile::open(path);
  if (!m.ok()) return m.error();
  auto map = std::make_shared<MmapFile>(std::move(m).value());
  File f;
  f.map_ = map;
  f.bytes_ = map->bytes();
  f.path_ = path;
  auto r = Parser(f.bytes_).run(std::move(f));
  if (!r.ok()) return r.error().context(path);
  return r;
}

const Value* File::find(std::string_view key) const {
  auto it = kv_index_.find(std::string(key));
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

void File::release(const TensorInfo& t, uint64_t offset, uint64_t n) const {
  if (!map_ || !t.data || offset >= t.n_bytes) return;
  map_->release(size_t(t.data - map_->data() + offset), size_t(std::min(n, t.n_bytes - offset)));
}

void File::release(const uint8_t* p, size_t n) const {
  if (!map_ || p < map_->data() || p >= map_->data() + map_->size()) return;
  map_->release(size_t(p - map_->data()), n);
}

void File::small_pages() const {
  if (map_) map_->small_pages();
}

const TensorInfo* File::tensor(std::string_view name) const {
  auto it = tensor_index_.find(std::string(name));
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

namespace {

Error missing(std::string_view key) { return Error(Code::not_found, "missing metadata key '" + std::string(key) + "'"); }

Error wrong_type(std::string_view key, const Value& v, std::string_view want) {
  return Error(Code::corrupt, "metadata key '" + std::string(key) + "' is " + std::string(value_type_name(v.type())) +
                                  ", expected " + std::string(want));
}

template <typename T>
Result<T> get_int(const File& f, std::string_view key, std::string_view want) {
  const Value* v = f.find(key);
  if (!v) return missing(key);
  auto i = v->as_int();
  if (!i) {
    if (auto u = v->get_if<uint64_t>(); u && std::is_same_v<T, uint64_t>) return T(*u);
    return wrong_type(key, *v, want);
  }
  if (*i < int64_t(std::numeric_limits<T>::min()) ||
      (*i > 0 && uint64_t(*i) > uint64_t(std::numeric_limits<T>::max())))
    return Error(Code::corrupt, "metadata key '" + std::string(key) + "' = " + std::to_string(*i) + " is out of range for " + std::string(want));
  return T(*i);
}

}  // namespace

Result<uint32_t> File::get_u32(std::string_view key) const { return get_int<uint32_t>(*this, key, "u32"); }
Result<int32_t> File::get_i32(std::string_view key) const { return get_int<int32_t>(*this, key, "i32"); }
Result<uint64_t> File::get_u64(std::string_view key) const { return get_int<uint64_t>(*this, key, "u64"); }

Result<float> File::get_f32(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(key);
  auto d = v->as_number();
  if (!d) return wrong_type(key, *v, "f32");
  return float(*d);
}

Result<bool> File::get_bool(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(key);
  if (auto b = v->get_if<bool>()) return *b;
  return wrong_type(key, *v, "bool");
}

Result<std::string> File::get_string(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(key);
  if (auto s = v->get_if<std::string>()) return *s;
  return wrong_type(key, *v, "string");
}

Result<const Array*> File::get_array(std::string_view key) const {
  const Value* v = find(key);
  if (!v) return missing(key);
  if (auto a = v->get_if<Array>()) return a;
  return wrong_type(key, *v, "array");
}

Result<uint32_t> File::get_u32_or(std::string_view key, uint32_t dflt) const {
  return has(key) ? get_u32(key) : Result<uint32_t>(dflt);
}
Result<float> File::get_f32_or(std::string_view key, float dflt) const {
  return has(key) ? get_f32(key) : Result<float>(dflt);
}
Result<bool> File::get_bool_or(std::string_view key, bool dflt) const {
  return has(key) ? get_bool(key) : Result<bool>(dflt);
}
Result<std::string> File::get_string_or(std::string_view key, std::string dflt) const {
  return has(key) ? get_string(key) : Result<std::string>(std::move(dflt));
}

std::string describe(const File& f, bool with_tensors) {
  std::ostringstream os;
  uint64_t data_bytes = 0;
  for (const auto& t : f.tensors()) data_bytes += t.n_bytes;
  os << "GGUF v" << f.version() << ": " << f.metadata().size() << " metadata keys, " << f.tensors().size()
     << " tensors (" << human_bytes(data_bytes) << "), alignment " << f.alignment() << ", data at offset "
     << f.data_offset() << "\n";
  size_t key_w = 0, type_w = 0;
  for (const auto& kv : f.metadata()) {
    key_w = std::max(key_w, kv.key.size());
    type_w = std::max(type_w, type_string(kv.value).size());
  }
  key_w = std::min<size_t>(key_w, 48);
  os << "metadata:\n";
  for (const auto& kv : f.metadata()) {
    const std::string ty = type_string(kv.value);
    os << "  " << kv.key << std::string(key_w > kv.key.size() ? key_w - kv.key.size() : 0, ' ') << "  " << ty
       << std::string(type_w - ty.size(), ' ') << "  " << kv.value.to_string() << "\n";
  }
  if (with_tensors && !f.tensors().empty()) {
    size_t name_w = 4, shape_w = 5;
    for (const auto& t : f.tensors()) {
      name_w = std::max(name_w, t.name.size());
      shape_w = std::max(shape_w, shape_string(t).size());
    }
    name_w = std::min<size_t>(name_w, 48);
    auto pad = [](const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); };
    os << "tensors:\n  " << pad("name", name_w) << "  " << pad("type", 7) << "  " << pad("shape", shape_w) << "  "
       << pad("offset", 12) << "  bytes\n";
    for (const auto& t : f.tensors()) {
      os << "  " << pad(t.name, name_w) << "  " << pad(std::string(type_name(t.type)), 7) << "  "
         << pad(shape_string(t), shape_w) << "  " << pad(std::to_string(t.offset), 12) << "  " << t.n_bytes << "\n";
    }
  }
  return os.str();
}

}  // namespace nurl::gguf
