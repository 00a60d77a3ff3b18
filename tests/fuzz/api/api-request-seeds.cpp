// Seed corpus for api_request_fuzz: `api_request_fuzz_seeds <out-dir> [testdata]` writes one
// valid request per parser (the first byte selects it), shaped as the APIs' references show.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: api_request_fuzz_seeds <out-dir> [testdata]\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const std::vector<std::string> seeds = {
      std::string(1, '\0') +
          R"({"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]},)"
          R"({"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},)"
          R"({"role":"tool","tool_call_id":"c1","content":"ok"}],"temperature":0.5,"stop":["x"],"max_tokens":5,"stream":true,)"
          R"("stream_options":{"include_usage":true},"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object"}}},)"
          R"("tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"auto",)"
          R"("logprobs":true,"top_logprobs":2,"reasoning_effort":"low","options":{"num_ctx":128}})",
      std::string(1, '\1') + R"({"model":"m","prompt":["Once"],"echo":true,"logprobs":1,"max_tokens":3})",
      std::string(1, '\2') + R"({"model":"m","input":[[1,2],[3]],"encoding_format":"base64","dimensions":4})",
      std::string(1, '\3') +
          R"({"model":"m","instructions":"i","input":[{"role":"user","content":[{"type":"input_text","text":"x"}]},)"
          R"({"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"o"}],)"
          R"("tools":[{"type":"function","name":"f"}],"text":{"format":{"type":"json_object"}},"reasoning":{"effort":"high"}})",
      std::string(1, '\4') +
          R"({"model":"m","max_tokens":2048,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"q"},)"
          R"({"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]},)"
          R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"r"}]}],)"
          R"("tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"any"},"thinking":{"type":"enabled","budget_tokens":1024}})",
      std::string(1, '\5') + R"({"model":"m","messages":[{"role":"user","content":"x"}]})",
  };
  for (size_t i = 0; i < seeds.size(); ++i) {
    std::ofstream o(out / ("seed-" + std::to_string(i)), std::ios::binary);
    o.write(seeds[i].data(), static_cast<std::streamsize>(seeds[i].size()));
    if (!o) {
      std::cerr << "cannot write seed " << i << "\n";
      return 1;
    }
  }
  return 0;
}
