// libFuzzer target for the safetensors header parser. Any input must give a file or an Error with
// a message (never a crash or a sanitizer report); what is accepted must keep the promises the
// converter relies on: every tensor's bytes inside the input, sized by dtype × shape, no overlap.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "engine/convert/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  auto r = nurl::convert::parse_safetensors(bytes, "fuzz.safetensors");
  if (!r.ok()) {
    if (r.error().msg.empty()) std::abort();
    return 0;
  }
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& t : r->tensors) {
    if (t.data < data + r->data_start || t.data + t.n_bytes() > data + size) std::abort();
    if (t.n_bytes() != t.n_elements * nurl::convert::dtype_size(t.dtype)) std::abort();
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    if (n != t.n_elements) std::abort();
    if (r->find(t.name) == nullptr) std::abort();
    if (t.n_bytes()) ranges.emplace_back(t.begin, t.end);
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].first < ranges[i - 1].second) std::abort();
  return 0;
}
