// GGUF writer (v3 by default, v2 on request): a streaming builder that never holds tensor data.
// Declare metadata and tensor infos first; begin() writes the header; then tensor bytes are
// streamed in declared order, in chunks of any size. Offsets and padding (general.alignment,
// default 32) are computed here. Layout: each tensor starts aligned and is padded to the
// alignment after its bytes; a file without tensors ends right after its header.
//
// Streaming (a converter):
//   gguf::Writer w;
//   w.add_string("general.architecture", "llama").add_u32("llama.block_count", 2);
//   w.add_tensor("token_embd.weight", GgmlType::Q8_0, {256, 512});   // ne[0] = row length
//   NURL_TRY(w.begin(path));                          // header written (to path + ".partial")
//   for (...) NURL_TRY(w.write(chunk));               // bytes of tensor 0, then 1, ... any sizes
//   NURL_TRY(w.finish());                             // checks every byte arrived, renames to path
//
// Small files (tests, tools): attach each tensor's bytes at declaration (a view; keep it alive)
// and write everything in one call:
//   std::vector<float> emb(64 * 512);
//   w.add_tensor("token_embd.weight", GgmlType::F32, {64, 512}, gguf::as_bytes(emb));
//   auto bytes = w.write_to_memory();                 // Result<std::vector<uint8_t>>; or write_to_file(path)
//
// Declaration errors (duplicate key or tensor, bad shape, wrong data size, bad alignment, mixed
// array item types) are kept and returned by begin()/write_to_*(), naming the key or tensor, so
// the add_* calls can be chained.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf/gguf.h"

namespace nurl::gguf {

template <typename T>
std::span<const uint8_t> as_bytes(std::span<const T> s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size_bytes()};
}
template <typename T>
std::span<const uint8_t> as_bytes(const std::vector<T>& v) {
  return as_bytes(std::span<const T>(v));
}

// Helpers to build Values, e.g. for add(key, make_array(ValueType::u32, {...})).
Value make_array(ValueType elem_type, std::vector<Value> items);
Value make_string_array(std::span<const std::string> items);

class Writer {
 public:
  explicit Writer(uint32_t version = 3);
  ~Writer();
  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // A writer that reproduces `src`: its version, metadata and tensors, each tensor's data attached
  // as a view into src (which must outlive the writer). Change keys with set() before writing.
  static Writer from_file(const File& src);

  // --- metadata, written in declaration order ---
  Writer& add(std::string key, Value value);  // error if the key already exists
  Writer& set(std::string key, Value value);  // replaces the value in place, or appends
  bool remove(std::string_view key);          // true when the key existed
  Writer& add_u8(std::string key, uint8_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_i8(std::string key, int8_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_u16(std::string key, uint16_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_i16(std::string key, int16_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_u32(std::string key, uint32_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_i32(std::string key, int32_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_u64(std::string key, uint64_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_i64(std::string key, int64_t v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_f32(std::string key, float v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_f64(std::string key, double v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_bool(std::string key, bool v) { return add(std::move(key), Value{Value::Storage(v)}); }
  Writer& add_string(std::string key, std::string v) { return add(std::move(key), Value{Value::Storage(std::move(v))}); }
  Writer& add_string_array(std::string key, std::span<const std::string> items) {
    return add(std::move(key), make_string_array(items));
  }
  Writer& add_u32_array(std::string key, std::span<const uint32_t> items);
  Writer& add_i32_array(std::string key, std::span<const int32_t> items);
  Writer& add_f32_array(std::string key, std::span<const float> items);

  // --- tensor infos, data written in declaration order ---
  // ne in GGUF order (ne[0] = row length, a multiple of the type's block size), 1..4 dims, none 0.
  // `data`, when given, must be exactly the tensor's byte size; write_to_* and finish() use it.
  Writer& add_tensor(std::string name, GgmlType type, std::span<const uint64_t> ne,
                     std::span<const uint8_t> data = {});
  Writer& add_tensor(std::string name, GgmlType type, std::initializer_list<uint64_t> ne,
                     std::span<const uint8_t> data = {}) {
    return add_tensor(std::move(name), type, std::span<const uint64_t>(ne.begin(), ne.size()), data);
  }

  // What will be written; offsets are final once begin() succeeded (they depend on the alignment).
  const std::vector<KeyValue>& metadata() const { return kv_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  uint64_t alignment() const { return alignment_; }
  // Total file size; computes the layout, so it also reports declaration errors.
  Result<uint64_t> file_size();

  // --- streaming ---
  // Writes the header to `path + ".partial"`; finish() renames it to `path`. A writer destroyed
  // before finish() removes the partial file, so a failed conversion leaves nothing behind.
  Result<void> begin(const std::string& path);
  // Appends the file to `out` (the caller keeps it alive until finish()).
  Result<void> begin(std::vector<uint8_t>& out);
  // Next bytes of tensor data: the current tensor's rest, then the next tensor's, and so on.
  // Padding between tensors is inserted here. More bytes than declared is an error.
  Result<void> write(std::span<const uint8_t> chunk);
  // Writes the attached data of every tensor not yet written (all of them must have data).
  Result<void> write_attached();
  // Every declared byte must have arrived; flushes, closes and renames.
  Result<void> finish();

  // --- interrupted writes (long conversions) ---
  // Called with every byte that goes to the output after it is set, in file order (header,
  // padding, tensor data): a running hash of the partial file, for instance.
  void set_observer(std::function<void(std::span<const uint8_t>)> observer);
  // Instead of begin(path): continues `path + ".partial"`, written before by a writer with the same
  // declarations. Its header must be exactly the one these declarations produce and it must hold
  // the first `tensors_done` tensors; it is cut after them and the next write() goes to tensor
  // `tensors_done`. The observer sees only the bytes written from here on.
  Result<void> resume(const std::string& path, size_t tensors_done);
  // Gives up writing but keeps the partial file (closed) for a later resume(); a writer destroyed
  // or failing otherwise removes it.
  Result<void> abandon_keep_partial();
  // Absolute file offset of tensor i's data (n_tensors: the file size); valid once the layout is
  // computed (begin, resume or file_size).
  uint64_t tensor_file_offset(size_t i) const;
  // Tensors completely written so far.
  size_t tensors_written() const { return cur_; }
  // Hands what is buffered to the OS (a checkpoint then survives the process being killed).
  Result<void> flush();

  // --- one call: begin + attached data + finish ---
  Result<std::vector<uint8_t>> write_to_memory();
  Result<void> write_to_file(const std::string& path);

 private:
  class Sink;
  class FileSink;
  class MemorySink;
  enum class State { declaring, writing, finished, failed };

  Result<void> layout();  // validates the declarations, computes offsets and header size
  Result<void> write_header();
  Result<void> start(std::unique_ptr<Sink> sink);
  Result<void> fail(Error e);

  uint32_t version_;
  uint64_t alignment_ = 32;
  std::vector<KeyValue> kv_;
  std::unordered_map<std::string, size_t> kv_index_;
  std::vector<TensorInfo> tensors_;  // data = attached view (or null)
  std::unordered_map<std::string, size_t> tensor_index_;
  std::optional<Error> decl_error_;  // first declaration error

  uint64_t header_bytes_ = 0;  // unpadded header size
  uint64_t data_offset_ = 0;   // aligned start of the data section
  uint64_t data_bytes_ = 0;    // padded data section size
  State state_ = State::declaring;
  std::unique_ptr<Sink> sink_;
  std::function<void(std::span<const uint8_t>)> observer_;
  size_t cur_ = 0;          // tensor being written
  uint64_t cur_done_ = 0;   // bytes of it written so far
};

// Copies a whole file (metadata and tensors) to `path`, streaming the tensor data.
Result<void> copy_file(const File& src, const std::string& path);

}  // namespace nurl::gguf
