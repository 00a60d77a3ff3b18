// ZeroPages' mapping: private anonymous memory, zero-filled by the kernel on first touch.
#include "core/zero-pages.h"

#include <sys/mman.h>

#include <new>

namespace nurl::detail {

void* map_zero_pages(size_t n) {
  if (n == 0) return nullptr;
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

void unmap_pages(void* p, size_t n) {
  if (p) munmap(p, n);
}

}  // namespace nurl::detail
