// GGUF writer: declarations are validated in layout(), the header is serialised straight into a
// sink (file or memory), tensor bytes are passed through with padding. Invariant while writing:
// sink position == data_offset_ + tensors_[cur_].offset + cur_done_ (once the header is out).
#include "engine/gguf/gguf-writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

namespace nurl::gguf {

namespace {

constexpr uint64_t kMaxAlignment = uint64_t(1) << 20;

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Bytes a value's payload takes (without its type id).
uint64_t payload_size(const Value& v) {
  switch (v.type()) {
    case ValueType::u8: case ValueType::i8: case ValueType::boolean: return 1;
    case ValueType::u16: case ValueType::i16: return 2;
    case ValueType::u32: case ValueType::i32: case ValueType::f32: return 4;
    case ValueType::u64: case ValueType::i64: case ValueType::f64: return 8;
    case ValueType::string: return 8 + v.get_if<std::string>()->size();
    case ValueType::array: {
      uint64_t n = 4 + 8;
      for (const auto& item : v.get_if<Array>()->items) n += payload_size(item);
      return n;
    }
  }
  return 0;
}

// Arrays must be homogeneous: every item of the declared element type, nesting bounded.
Result<void> check_value(const Value& v, const std::string& key, int depth) {
  const Array* a = v.get_if<Array>();
  if (!a) return {};
  if (depth >= kMaxArrayDepth) return Error(Code::invalid_argument, "key '" + key + "': arrays nested too deeply");
  if (uint32_t(a->elem_type) > uint32_t(ValueType::f64))
    return Error(Code::invalid_argument, "key '" + key + "': unknown array element type " +
                                             std::to_string(uint32_t(a->elem_type)));
  for (size_t i = 0; i < a->items.size(); ++i) {
    if (a->items[i].type() != a->elem_type)
      return Error(Code::invalid_argument, "key '" + key + "': array item " + std::to_string(i) + " is " +
                                               std::string(value_type_name(a->items[i].type())) + ", the array holds " +
                                               std::string(value_type_name(a->elem_type)));
    NURL_TRY(check_value(a->items[i], key, depth + 1));
  }
  return {};
}

template <typename T>
Value numeric_array(ValueType t, std::span<const T> items) {
  Array a;
  a.elem_type = t;
  a.items.reserve(items.size());
  for (T x : items) a.items.push_back(Value{Value::Storage(x)});
  return Value{Value::Storage(std::move(a))};
}

}  // namespace

Value make_array(ValueType elem_type, std::vector<Value> items) {
  return Value{Value::Storage(Array{elem_type, std::move(items)})};
}

Value make_string_array(std::span<const std::string> items) {
  Array a;
  a.elem_type = ValueType::string;
  a.items.reserve(items.size());
  for (const auto& s : items) a.items.push_back(Value{Value::Storage(s)});
  return Value{Value::Storage(std::move(a))};
}

// ---- sinks -------------------------------------------------------------------------------------

class Writer::Sink {
 public:
  virtual ~Sink() = default;
  Result<void> write(const void* p, size_t n) {
    NURL_TRY(put(p, n));
    pos_ += n;
    if (observer && n) observer({static_cast<const uint8_t*>(p), n});
    return {};
  }
  virtual Result<void> close() = 0;  // flush and make the result visible
  virtual Result<void> flush() { return {}; }
  uint64_t pos() const { return pos_; }
  std::function<void(std::span<const uint8_t>)> observer;

 protected:
  virtual Result<void> put(const void* p, size_t n) = 0;
  uint64_t pos_ = 0;
};

class Writer::FileSink final : public Writer::Sink {
 public:
  static Result<std::unique_ptr<Sink>> open(const std::string& path) {
    auto s = std::unique_ptr<FileSink>(new FileSink(path));
    s->f_ = std::fopen(s->partial_.c_str(), "wb");
    if (!s->f_) return Error(Code::io, s->partial_ + ": cannot create: " + std::strerror(errno));
    std::setvbuf(s->f_, nullptr, _IOFBF, size_t(1) << 20);
    return std::unique_ptr<Sink>(std::move(s));
  }
  // The existing partial file: its first header.size() bytes must equal `header`; it is cut to
  // `keep` bytes (it must have at least that many) and appended to.
  static Result<std::unique_ptr<FileSink>> reopen(const std::string& path, std::span<const uint8_t> header,
                                                  uint64_t keep) {
    auto s = std::unique_ptr<FileSink>(new FileSink(path));
    const std::string& partial = s->partial_;
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(partial, ec);
    if (ec) return Error(Code::not_found, partial + ": cannot resume: " + ec.message());
    if (size < keep)
      return Error(Code::corrupt, partial + ": cannot resume: " + std::to_string(size) + " bytes, the completed tensors need " +
                                      std::to_string(keep));
    std::FILE* f = std::fopen(partial.c_str(), "r+b");
    if (!f) return Error(Code::io, partial + ": cannot open: " + std::strerror(errno));
    std::vector<uint8_t> have(header.size());
    const bool same = std::fread(have.data(), 1, have.size(), f) == have.size() &&
                      std::equal(have.begin(), have.end(), header.begin());
    if (!same) {
      std::fclose(f);
      return Error(Code::corrupt, partial + ": cannot resume: its header differs from this conversion's");
    }
    if (std::fflush(f) != 0 || ::ftruncate(fileno(f), off_t(keep)) != 0 || std::fseek(f, long(keep), SEEK_SET) != 0) {
      const int err = errno;
      std::fclose(f);
      return Error(Code::io, partial + ": cannot cut to " + std::to_string(keep) + " bytes: " + std::strerror(err));
    }
    s->f_ = f;
    s->pos_ = keep;
    std::setvbuf(s->f_, nullptr, _IOFBF, size_t(1) << 20);
    return s;
  }
  Result<void> flush() override {
    if (std::fflush(f_) != 0) return Error(Code::io, partial_ + ": write failed: " + std::strerror(errno));
    return {};
  }
  // Closes the partial file and leaves it in place.
  Result<void> close_keep() {
    const bool ok = std::fflush(f_) == 0;
    const int err = errno;
    std::fclose(f_);
    f_ = nullptr;
    if (!ok) return Error(Code::io, partial_ + ": write failed: " + std::strerror(err));
    return {};
  }
  ~FileSink() override {
    if (f_) {
      std::fclose(f_);
      std::error_code ec;
      std::filesystem::remove(partial_, ec);  // never leave a half-written model behind
    }
  }
  Result<void> put(const void* p, size_t n) override {
    if (n && std::fwrite(p, 1, n, f_) != n)
      return Error(Code::io, partial_ + ": write failed at offset " + std::to_string(pos_) + ": " + std::strerror(errno));
    return {};
  }
  Result<void> close() override {
    const bool ok = std::fflush(f_) == 0;
    const int err = errno;
    const bool closed = std::fclose(f_) == 0;
    f_ = nullptr;
    std::error_code ec;
    if (!ok || !closed) {
      std::filesystem::remove(partial_, ec);
      return Error(Code::io, partial_ + ": write failed: " + std::strerror(ok ? errno : err));
    }
    std::filesystem::rename(partial_, path_, ec);
    if (ec) {
      std::filesystem::remove(partial_, ec);
      return Error(Code::io, path_ + ": cannot rename from " + partial_ + ": " + ec.message());
    }
    return {};
  }

 private:
  explicit FileSink(std::string path) : path_(std::move(path)), partial_(path_ + ".partial") {}
  std::string path_, partial_;
  std::FILE* f_ = nullptr;
};

class Writer::MemorySink final : public Writer::Sink {
 public:
  explicit MemorySink(std::vector<uint8_t>& out) : out_(out) {}
  Result<void> put(const void* p, size_t n) override {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
    return {};
  }
  Result<void> close() override { return {}; }

 private:
  std::vector<uint8_t>& out_;
};

// ---- declarations ------------------------------------------------------------------------------

Writer::Writer(uint32_t version) : version_(version) {
  if (version != 2 && version != 3)
    decl_error_ = Error(Code::invalid_argument, "GGUF writer: version " + std::to_string(version) + " (only 2 and 3)");
}
Writer::~Writer() = default;
Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&&) noexcept = default;

Writer Writer::from_file(const File& src) {
  Writer w(src.version());
  for (const auto& kv : src.metadata()) w.add(kv.key, kv.value);
  for (const auto& t : src.tensors())
    w.add_tensor(t.name, t.type, std::span<const uint64_t>(t.ne.data(), t.n_dims), t.bytes());
  return w;
}

Writer& Writer::add(std::string key, Value value) {
  if (decl_error_) return *this;
  if (state_ != State::declaring) {
    decl_error_ = Error(Code::invalid_argument, "key '" + key + "' declared after the header was written");
    return *this;
  }
  if (kv_index_.count(key)) {
    decl_error_ = Error(Code::invalid_argument, "duplicate metadata key '" + key + "'");
    return *this;
  }
  if (auto r = check_value(value, key, 0); !r.ok()) {
    decl_error_ = r.error();
    return *this;
  }
  kv_index_.emplace(key, kv_.size());
  kv_.push_back(KeyValue{std::move(key), std::move(value)});
  return *this;
}

Writer& Writer::set(std::string key, Value value) {
  auto it = kv_index_.find(key);
  if (it == kv_index_.end()) return add(std::move(key), std::move(value));
  if (decl_error_) return *this;
  if (state_ != State::declaring) {
    decl_error_ = Error(Code::invalid_argument, "key '" + key + "' changed after the header was written");
    return *this;
  }
  if (auto r = check_value(value, key, 0); !r.ok()) {
    decl_error_ = r.error();
    return *this;
  }
  kv_[it->second].value = std::move(value);
  return *this;
}

bool Writer::remove(std::string_view key) {
  auto it = kv_index_.find(std::string(key));
  if (it == kv_index_.end() || state_ != State::declaring) return false;
  kv_.erase(kv_.begin() + static_cast<std::ptrdiff_t>(it->second));
  kv_index_.clear();
  for (size_t i = 0; i < kv_.size(); ++i) kv_index_.emplace(kv_[i].key, i);
  return true;
}

Writer& Writer::add_u32_array(std::string key, std::span<const uint32_t> items) {
  return add(std::move(key), numeric_array(ValueType::u32, items));
}
Writer& Writer::add_i32_array(std::string key, std::span<const int32_t> items) {
  return add(std::move(key), numeric_array(ValueType::i32, items));
}
Writer& Writer::add_f32_array(std::string key, std::span<const float> items) {
  return add(std::move(key), numeric_array(ValueType::f32, items));
}

Writer& Writer::add_tensor(std::string name, GgmlType type, std::span<const uint64_t> ne,
                           std::span<const uint8_t> data) {
  if (decl_error_) return *this;
  const std::string where = "tensor '" + name + "'";
  auto bad = [&](const std::string& what) -> Writer& {
    decl_error_ = Error(Code::invalid_argument, where + ": " + what);
    return *this;
  };
  if (state_ != State::declaring) return bad("declared after the header was written");
  if (tensor_index_.count(name)) return bad("duplicate tensor name");
  if (ne.empty() || ne.size() > 4) return bad(std::to_string(ne.size()) + " dimensions (1..4 allowed)");
  const TypeInfo& ti = type_info(type);
  if (ti.type != type) return bad("unknown type id " + std::to_string(uint32_t(type)));
  TensorInfo t;
  t.name = std::move(name);
  t.type = type;
  t.n_dims = uint32_t(ne.size());
  uint64_t n = 1;
  for (size_t d = 0; d < ne.size(); ++d) {
    if (ne[d] == 0 || ne[d] > uint64_t(std::numeric_limits<int64_t>::max()) ||
        n > uint64_t(std::numeric_limits<int64_t>::max()) / ne[d])
      return bad("dimension " + std::to_string(d) + " = " + std::to_string(ne[d]) + " is zero or overflows");
    t.ne[d] = ne[d];
    n *= ne[d];
  }
  if (ne[0] % ti.block_elems != 0)
    return bad("row length " + std::to_string(ne[0]) + " is not a multiple of " + std::string(ti.name) +
               "'s block size " + std::to_string(ti.block_elems));
  t.n_elements = n;
  if (n / ti.block_elems > std::numeric_limits<uint64_t>::max() / ti.block_bytes) return bad("byte size overflows");
  t.n_bytes = row_bytes(ti, n);
  if (!data.empty() && data.size() != t.n_bytes)
    return bad("attached data is " + std::to_string(data.size()) + " bytes, the shape needs " +
               std::to_string(t.n_bytes));
  t.data = data.empty() ? nullptr : data.data();
  tensor_index_.emplace(t.name, tensors_.size());
  tensors_.push_back(std::move(t));
  return *this;
}

// ---- layout and header -------------------------------------------------------------------------

Result<void> Writer::layout() {
  if (decl_error_) return *decl_error_;
  alignment_ = 32;
  if (auto it = kv_index_.find("general.alignment"); it != kv_index_.end()) {
    const Value& v = kv_[it->second].value;
    auto a = v.as_int();
    if (!a || *a <= 0 || uint64_t(*a) > kMaxAlignment || (*a & (*a - 1)) != 0)
      return Error(Code::invalid_argument, "general.alignment must be a power of two up to 2^20, got " + v.to_string());
    alignment_ = uint64_t(*a);
  }
  uint64_t h = 4 + 4 + 8 + 8;
  for (const auto& kv : kv_) h += 8 + kv.key.size() + 4 + payload_size(kv.value);
  uint64_t off = 0;
  for (auto& t : tensors_) {
    h += 8 + t.name.size() + 4 + 8 * uint64_t(t.n_dims) + 4 + 8;
    t.offset = off;
    off = align_up(off + t.n_bytes, alignment_);
  }
  header_bytes_ = h;
  data_offset_ = tensors_.empty() ? h : align_up(h, alignment_);
  data_bytes_ = off;
  return {};
}

Result<uint64_t> Writer::file_size() {
  if (state_ == State::declaring) NURL_TRY(layout());
  return data_offset_ + data_bytes_;
}

namespace {

// Serialises header fields into a sink; each call appends little-endian bytes (x86/ARM hosts).
template <typename SinkT>
struct Out {
  SinkT& s;
  template <typename T>
  Result<void> pod(T x) { return s.write(&x, sizeof(T)); }
  Result<void> str(const std::string& x) {
    NURL_TRY(pod(uint64_t(x.size())));
    return s.write(x.data(), x.size());
  }
  Result<void> payload(const Value& v) {
    return std::visit(
        [&](const auto& x) -> Result<void> {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>) {
            return str(x);
          } else if constexpr (std::is_same_v<T, Array>) {
            NURL_TRY(pod(uint32_t(x.elem_type)));
            NURL_TRY(pod(uint64_t(x.items.size())));
            for (const auto& item : x.items) NURL_TRY(payload(item));
            return {};
          } else if constexpr (std::is_same_v<T, bool>) {
            return pod(uint8_t(x ? 1 : 0));
          } else {
            return pod(x);
          }
        },
        v.v);
  }
};

}  // namespace

Result<void> Writer::write_header() {
  Out<Sink> o{*sink_};
  NURL_TRY(o.pod(kMagic));
  NURL_TRY(o.pod(version_));
  NURL_TRY(o.pod(uint64_t(tensors_.size())));
  NURL_TRY(o.pod(uint64_t(kv_.size())));
  for (const auto& kv : kv_) {
    NURL_TRY(o.str(kv.key));
    NURL_TRY(o.pod(uint32_t(kv.value.type())));
    NURL_TRY(o.payload(kv.value));
  }
  for (const auto& t : tensors_) {
    NURL_TRY(o.str(t.name));
    NURL_TRY(o.pod(t.n_dims));
    for (uint32_t d = 0; d < t.n_dims; ++d) NURL_TRY(o.pod(t.ne[d]));
    NURL_TRY(o.pod(uint32_t(t.type)));
    NURL_TRY(o.pod(t.offset));
  }
  if (sink_->pos() != header_bytes_)
    return Error(Code::internal, "GGUF writer: header is " + std::to_string(sink_->pos()) + " bytes, planned " +
                                     std::to_string(header_bytes_));
  static constexpr uint8_t kZeros[64] = {};
  for (uint64_t pad = data_offset_ - header_bytes_; pad > 0;) {
    const uint64_t n = std::min<uint64_t>(pad, sizeof kZeros);
    NURL_TRY(sink_->write(kZeros, n));
    pad -= n;
  }
  return {};
}

// ---- streaming ---------------------------------------------------------------------------------

Result<void> Writer::fail(Error e) {
  state_ = State::failed;
  sink_.reset();  // a file sink removes its partial file
  return e;
}

Result<void> Writer::start(std::unique_ptr<Sink> sink) {
  if (state_ != State::declaring) return Error(Code::invalid_argument, "GGUF writer: begin() called twice");
  NURL_TRY(layout());
  sink_ = std::move(sink);
  sink_->observer = observer_;
  state_ = State::writing;
  cur_ = 0;
  cur_done_ = 0;
  if (auto r = write_header(); !r.ok()) return fail(r.error());
  return {};
}

void Writer::set_observer(std::function<void(std::span<const uint8_t>)> observer) {
  observer_ = std::move(observer);
  if (sink_) sink_->observer = observer_;
}

uint64_t Writer::tensor_file_offset(size_t i) const {
  if (i >= tensors_.size()) return data_offset_ + data_bytes_;
  return data_offset_ + tensors_[i].offset;
}

Result<void> Writer::resume(const std::string& path, size_t tensors_done) {
  if (state_ != State::declaring) return Error(Code::invalid_argument, "GGUF writer: resume() after begin()");
  NURL_TRY(layout());
  if (tensors_done > tensors_.size())
    return Error(Code::invalid_argument, "GGUF writer: resume after " + std::to_string(tensors_done) + " tensors, " +
                                             std::to_string(tensors_.size()) + " declared");
  std::vector<uint8_t> header;  // what begin() wrote: header and its padding
  sink_ = std::make_unique<MemorySink>(header);
  auto h = write_header();
  sink_.reset();
  NURL_TRY(h);
  auto s = FileSink::reopen(path, header, tensor_file_offset(tensors_done));
  if (!s.ok()) return s.error();
  sink_ = std::move(s).value();
  sink_->observer = observer_;
  state_ = State::writing;
  cur_ = tensors_done;
  cur_done_ = 0;
  return {};
}

Result<void> Writer::flush() {
  if (state_ != State::writing) return Error(Code::invalid_argument, "GGUF writer: flush() outside begin()/finish()");
  if (auto r = sink_->flush(); !r.ok()) return fail(r.error());
  return {};
}

Result<void> Writer::abandon_keep_partial() {
  if (state_ != State::writing) return Error(Code::invalid_argument, "GGUF writer: nothing to keep");
  auto* file = dynamic_cast<FileSink*>(sink_.get());
  if (!file) return Error(Code::invalid_argument, "GGUF writer: only a file can be kept");
  auto r = file->close_keep();
  sink_.reset();
  state_ = State::failed;
  return r;
}

Result<void> Writer::begin(const std::string& path) {
  if (state_ != State::declaring) return Error(Code::invalid_argument, "GGUF writer: begin() called twice");
  NURL_TRY(layout());
  auto s = FileSink::open(path);
  if (!s.ok()) return s.error();
  return start(std::move(s).value());
}

Result<void> Writer::begin(std::vector<uint8_t>& out) { return start(std::make_unique<MemorySink>(out)); }

Result<void> Writer::write(std::span<const uint8_t> chunk) {
  if (state_ != State::writing) return Error(Code::invalid_argument, "GGUF writer: write() outside begin()/finish()");
  static constexpr uint8_t kZeros[64] = {};
  while (!chunk.empty()) {
    if (cur_ >= tensors_.size())
      return fail(Error(Code::invalid_argument, "GGUF writer: " + std::to_string(chunk.size()) +
                                                    " bytes of tensor data beyond the declared tensors"));
    const TensorInfo& t = tensors_[cur_];
    const uint64_t take = std::min<uint64_t>(chunk.size(), t.n_bytes - cur_done_);
    if (auto r = sink_->write(chunk.data(), take); !r.ok()) return fail(r.error().context("tensor '" + t.name + "'"));
    chunk = chunk.subspan(take);
    cur_done_ += take;
    if (cur_done_ == t.n_bytes) {
      for (uint64_t pad = align_up(t.n_bytes, alignment_) - t.n_bytes; pad > 0;) {
        const uint64_t n = std::min<uint64_t>(pad, sizeof kZeros);
        if (auto r = sink_->write(kZeros, n); !r.ok()) return fail(r.error());
        pad -= n;
      }
      ++cur_;
      cur_done_ = 0;
    }
  }
  return {};
}

Result<void> Writer::write_attached() {
  if (state_ != State::writing) return Error(Code::invalid_argument, "GGUF writer: write_attached() outside begin()/finish()");
  if (cur_done_ != 0)
    return fail(Error(Code::invalid_argument, "tensor '" + tensors_[cur_].name + "': partly streamed, cannot use its attached data"));
  constexpr size_t kChunk = size_t(4) << 20;  // bounded slices so page cache, not heap, holds the data
  while (cur_ < tensors_.size()) {
    const TensorInfo& t = tensors_[cur_];
    if (!t.data) return fail(Error(Code::invalid_argument, "tensor '" + t.name + "': no data attached"));
    std::span<const uint8_t> all(t.data, t.n_bytes);
    for (size_t at = 0; at < all.size(); at += kChunk) NURL_TRY(write(all.subspan(at, std::min(kChunk, all.size() - at))));
  }
  return {};
}

Result<void> Writer::finish() {
  if (state_ != State::writing) return Error(Code::invalid_argument, "GGUF writer: finish() without begin()");
  if (cur_ < tensors_.size())
    return fail(Error(Code::invalid_argument, "tensor '" + tensors_[cur_].name + "': got " + std::to_string(cur_done_) +
                                                  " of " + std::to_string(tensors_[cur_].n_bytes) + " bytes (" +
                                                  std::to_string(tensors_.size() - cur_) + " tensors incomplete)"));
  const uint64_t want = data_offset_ + data_bytes_;
  if (sink_->pos() != want)
    return fail(Error(Code::internal, "GGUF writer: wrote " + std::to_string(sink_->pos()) + " bytes, planned " +
                                          std::to_string(want)));
  auto r = sink_->close();
  sink_.reset();
  if (!r.ok()) {
    state_ = State::failed;
    return r.error();
  }
  state_ = State::finished;
  return {};
}

Result<std::vector<uint8_t>> Writer::write_to_memory() {
  std::vector<uint8_t> out;
  NURL_TRY(layout());
  out.reserve(data_offset_ + data_bytes_);
  NURL_TRY(begin(out));
  NURL_TRY(write_attached());
  NURL_TRY(finish());
  return out;
}

Result<void> Writer::write_to_file(const std::string& path) {
  NURL_TRY(begin(path));
  NURL_TRY(write_attached());
  return finish();
}

Result<void> copy_file(const File& src, const std::string& path) {
  return Writer::from_file(src).write_to_file(path);
}

}  // namespace nurl::gguf
