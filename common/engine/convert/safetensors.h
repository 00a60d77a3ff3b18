// Safetensors reader, safe against hostile files. Layout (huggingface/safetensors):
//   u64 little-endian N | N bytes of JSON header | data buffer
// The header maps tensor names to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into
// the data buffer), plus an optional "__metadata__" object of strings. Everything the header
// claims is checked before use: its length against the file, the JSON, each dtype, shape
// (dimensions and element count bounded), byte range (inside the file, end − begin equal to what
// dtype and shape need) and that no two tensors overlap. Errors name the file, the tensor and the
// offsets. The file is mmapped; tensor data are views into the mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "core/mmap-file.h"

namespace nurl::convert {

enum class StDtype { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2 };
std::string_view dtype_name(StDtype d);
size_t dtype_size(StDtype d);

struct StTensor {
  std::string name;
  StDtype dtype = StDtype::F32;
  std::vector<uint64_t> shape;  // row-major (PyTorch order): shape.back() is the contiguous axis
  uint64_t begin = 0;           // byte offsets into the data buffer
  uint64_t end = 0;
  uint64_t n_elements = 0;
  const uint8_t* data = nullptr;  // view into the file's bytes

  uint64_t n_bytes() const { return end - begin; }
};

// Bounds on what a header may claim (a real checkpoint is far inside them).
constexpr uint64_t kMaxHeaderBytes = uint64_t(100) << 20;  // the format's own limit
constexpr uint64_t kMaxDim = uint64_t(1) << 32;
constexpr uint64_t kMaxElements = uint64_t(1) << 40;
constexpr size_t kMaxDims = 8;

struct StFile {
  std::string path;       // for messages
  std::string name;       // file name only
  uint64_t data_start = 0;  // absolute offset of the data buffer (8 + N)
  std::vector<StTensor> tensors;
  std::unordered_map<std::string, size_t> index;
  std::unordered_map<std::string, std::string> metadata;  // "__metadata__"
  std::shared_ptr<MmapFile> map;  // null when parsed from caller-owned bytes

  const StTensor* find(std::string_view n) const;
  // Drops the pages of tensor data already consumed from the resident set (streaming).
  void release(const StTensor& t, uint64_t offset, uint64_t n) const;
};

// Parses a whole file held in memory (fuzzing, tests); tensor views point into `bytes`.
// `name` is used in messages.
Result<StFile> parse_safetensors(std::span<const uint8_t> bytes, const std::string& name);
// Maps and parses a file.
Result<std::shared_ptr<const StFile>> open_safetensors(const std::string& path);

}  // namespace nurl::convert
