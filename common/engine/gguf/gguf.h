// GGUF container reader (v2 and v3). The file is mmapped; tensor data is handed out as views
// into the mapping, never copied. Everything the header claims is checked against the file
// size before use, so a hostile file yields an Error naming what and where, never a crash.
//
// Layout: magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv | kv pairs | tensor infos |
//         padding to general.alignment | data section (tensor offsets are relative to it).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/mmap-file.h"
#include "engine/quant/types.h"

namespace nurl::gguf {

// The file's first four bytes ("GGUF" read as a little-endian u32), and how deeply arrays may nest
// in metadata: the reader refuses deeper ones, so the writer never makes them.
inline constexpr uint32_t kMagic = 0x46554747;
inline constexpr int kMaxArrayDepth = 8;

// Metadata value types; the ids are GGUF's.
enum class ValueType : uint32_t {
  u8 = 0, i8 = 1, u16 = 2, i16 = 3, u32 = 4, i32 = 5, f32 = 6, boolean = 7,
  string = 8, array = 9, u64 = 10, i64 = 11, f64 = 12,
};
std::string_view value_type_name(ValueType t);

struct Value;
struct Array {
  ValueType elem_type = ValueType::u8;
  std::vector<Value> items;
};

// One metadata value. The variant index equals the GGUF type id.
struct Value {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, Array, uint64_t, int64_t, double>;
  Storage v;

  ValueType type() const { return static_cast<ValueType>(v.index()); }
  template <typename T> const T* get_if() const { return std::get_if<T>(&v); }
  // Any integer type whose value fits; nullopt otherwise.
  std::optional<int64_t> as_int() const;
  // Any numeric type (ints and floats) as double.
  std::optional<double> as_number() const;
  std::string to_string(size_t max_items = 8) const;  // for inspection output
};

struct KeyValue {
  std::string key;
  Value value;
};

struct TensorInfo {
  std::string name;
  GgmlType type = GgmlType::F32;
  uint32_t n_dims = 0;
  std::array<uint64_t, 4> ne{1, 1, 1, 1};  // ne[0] is the row length (contiguous)
  uint64_t offset = 0;                     // relative to the data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  const uint8_t* data = nullptr;           // view into the file mapping

  uint64_t n_rows() const { return n_elements / ne[0]; }
  std::span<const uint8_t> bytes() const { return {data, n_bytes}; }
};

class File {
 public:
  // Maps and parses a file.
  static Result<File> open(const std::string& path);
  // Parses bytes that the caller keeps alive (fuzzing, tests). Tensor views point into `bytes`.
  static Result<File> parse(std::span<const uint8_t> bytes);

  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute file offset of the data section
  std::span<const uint8_t> bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

  const std::vector<KeyValue>& metadata() const { return kv_; }
  const Value* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed accessors: an error names the key when it is missing or of another type.
  // The integer getters accept any integer type whose value fits the requested one
  // (converters disagree on u32 vs i32); get_f32 also accepts f64 and integers.
  Result<uint32_t> get_u32(std::string_view key) const;
  Result<int32_t> get_i32(std::string_view key) const;
  Result<uint64_t> get_u64(std::string_view key) const;
  Result<float> get_f32(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<std::string> get_string(std::string_view key) const;
  Result<const Array*> get_array(std::string_view key) const;
  // Optional variants: the default when missing, an error when present with a wrong type.
  Result<uint32_t> get_u32_or(std::string_view key, uint32_t dflt) const;
  Result<float> get_f32_or(std::string_view key, float dflt) const;
  Result<bool> get_bool_or(std::string_view key, bool dflt) const;
  Result<std::string> get_string_or(std::string_view key, std::string dflt) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* tensor(std::string_view name) const;
  // Drops a tensor's pages (bytes [offset, offset + n) of it) from the resident set once a
  // streaming reader is done with them (MmapFile::release); nothing for caller-owned bytes.
  void release(const TensorInfo& t, uint64_t offset = 0, uint64_t n = UINT64_MAX) const;
  // The same for n bytes at p inside the mapping (a tensor's data, or part of it).
  void release(const uint8_t* p, size_t n) const;
  // Small pages only for the mapping from now on (MmapFile::small_pages): after most of it was
  // released, the small tensors still read stay small in memory.
  void small_pages() const;

 private:
  std::shared_ptr<MmapFile> map_;  // null when parsing caller-owned bytes
  std::span<const uint8_t> bytes_;
  std::string path_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<KeyValue> kv_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> tensor_index_;

  friend class Parser;
};

// Human-readable dump of the metadata and tensor table (name, type, shape, offset).
std::string describe(const File& f, bool with_tensors = true);

}  // namespace nurl::gguf
