// Seed corpus for safetensors_fuzz: `safetensors_fuzz_seeds <out-dir> <testdata-dir>`. Small
// well-formed files (every dtype, empty tensors, metadata, padding) and near-misses.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

void save(const std::filesystem::path& p, const std::string& header, size_t data_bytes) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[size_t(i)] = char((header.size() >> (8 * i)) & 0xff);
  b += header;
  b.append(data_bytes, '\x3c');
  std::ofstream(p, std::ios::binary) << b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <out-dir> <testdata-dir>\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  save(out / "empty.st", "{}", 0);
  save(out / "meta.st", R"({"__metadata__":{"format":"pt","x":"y"}})", 0);
  save(out / "one.st", R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", 24);
  save(out / "padded.st", R"({"w":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}}      )", 8);
  save(out / "zero.st", R"({"e":{"dtype":"F16","shape":[0,5],"data_offsets":[0,0]},"s":{"dtype":"I64","shape":[],"data_offsets":[0,8]}})", 8);
  std::string all = "{";
  size_t off = 0;
  const std::pair<const char*, size_t> dtypes[] = {{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4},
                                                   {"I16", 2}, {"I8", 1}, {"U8", 1}, {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  for (const auto& [name, size] : dtypes) {
    if (off) all += ",";
    all += "\"t_" + std::string(name) + "\":{\"dtype\":\"" + name + "\",\"shape\":[3,2],\"data_offsets\":[" +
           std::to_string(off) + "," + std::to_string(off + 6 * size) + "]}";
    off += 6 * size;
  }
  save(out / "all-dtypes.st", all + "}", off);
  save(out / "overlap.st", R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 24);
  save(out / "truncated.st", R"({"w":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", 10);
  return 0;
}
