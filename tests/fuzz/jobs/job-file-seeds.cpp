// Seed corpus for job_file_fuzz: `job_file_fuzz_seeds <out-dir> <testdata-dir>`. Job files as the
// manager writes them for each kind and state, and near-misses.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <out-dir> <testdata-dir>\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const char* seeds[][2] = {
      {"pull-running", R"({"id":"pull-0a1b2c3d4e5f","kind":"pull","source":"https://x/m.gguf","name":"m:latest",)"
                       R"("state":"running","progress":{"status":"pulling 0a1b","digest":"sha256:0a","total":100,)"
                       R"("completed":40,"stage":"downloading"},"created_at":"2026-12-01T10:00:00Z",)"
                       R"("request":{"source":"https://x/m.gguf","name":""},"key":"https://x/m.gguf"})"},
      {"convert-saved", R"({"id":"convert-00ff","kind":"convert","state":"running","request":{"source":"/c",)"
                        R"("type":"q8_0","name":"c:latest"},"saved":{"resume":{"tensors_done":7,)"
                        R"("file_offset":123456,"prefix_sha256":"ab"}}})"},
      {"quantize-done", R"({"id":"quantize-1","kind":"quantize","state":"succeeded","request":{"blob":"sha256:00",)"
                        R"("type":"Q4_K_M","output":"/o.gguf"},"saved":{"produced":true}})"},
      {"failed", R"j({"id":"pull-2","state":"failed","error":"not found (404)","request":{}})j"},
      {"old-pull", R"({"id":"pull-3","state":"queued","request":{"source":"hf.co/a/b:Q4_0","name":""}})"},
      {"bad-id", R"({"id":"../../etc","state":"running","request":{}})"},
      {"bad-state", R"({"id":"pull-4","state":"paused","request":{}})"},
      {"types", R"({"id":"pull-5","state":"running","kind":7,"request":{"source":5},"progress":{"total":"x"}})"},
      {"truncated", R"({"id":"pull-6","state":"runn)"},
  };
  for (const auto& [name, text] : seeds) std::ofstream(out / name, std::ios::binary) << text;
  return 0;
}
