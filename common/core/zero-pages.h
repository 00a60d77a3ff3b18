// ZeroPages<T>: a zero-filled array of n T whose memory the kernel provides page by page on first
// touch (an anonymous mapping), so a buffer sized for the worst case — the whole context of the
// KV cache, a full prompt batch — holds resident memory only for the part in use. Reads of
// untouched parts see zeros, as a std::vector<T>(n) would. Move-only; unmaps on destruction.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace nurl {

namespace detail {
// Maps n zero bytes (nullptr for n = 0); throws std::bad_alloc when the mapping fails.
void* map_zero_pages(size_t n);
void unmap_pages(void* p, size_t n);
}  // namespace detail

template <class T>
class ZeroPages {
  static_assert(std::is_trivially_copyable_v<T>, "zero bytes must be a valid T");

 public:
  ZeroPages() = default;
  explicit ZeroPages(size_t n) : data_(static_cast<T*>(detail::map_zero_pages(n * sizeof(T)))), size_(n) {}
  ZeroPages(ZeroPages&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroPages& operator=(ZeroPages&& o) noexcept {
    if (this != &o) {
      detail::unmap_pages(data_, size_ * sizeof(T));
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;
  ~ZeroPages() { detail::unmap_pages(data_, size_ * sizeof(T)); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nurl
