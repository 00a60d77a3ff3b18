// Seed corpus for hf_files_fuzz: `hf_files_fuzz_seeds <out-dir> <testdata-dir>`: a config.json,
// small tokenizer.json files with each kind of pre_tokenizer, and a small SentencePiece model
// (the mode byte first, see hf-files-fuzz.cpp).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace {

void save(const std::filesystem::path& p, char mode, const std::string& body) {
  std::ofstream(p, std::ios::binary) << mode << body;
}

std::string pb_len(int field, const std::string& payload) {
  std::string s(1, char((field << 3) | 2));
  size_t n = payload.size();
  do {
    s += char((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n);
  return s + payload;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <out-dir> <testdata-dir>\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  save(out / "config.json", '\0',
       R"({"architectures":["LlamaForCausalLM"],"hidden_size":256,"num_hidden_layers":2,"vocab_size":512,)"
       R"("rope_theta":10000.0,"rms_norm_eps":1e-05,"tie_word_embeddings":false,"rope_scaling":null})");
  const std::string model = R"("model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"Ġ":3},"merges":["a b"]})";
  const std::string split =
      R"({"type":"Split","pattern":{"Regex":"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},"behavior":"Isolated","invert":false})";
  save(out / "tok-qwen2.json", '\1',
       R"({"added_tokens":[{"id":4,"content":"<|x|>","special":true}],"pre_tokenizer":{"type":"Sequence","pretokenizers":[)" +
           split + R"(,{"type":"ByteLevel","use_regex":false}]},)" + model + "}");
  save(out / "tok-gpt2.json", '\1', R"({"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},)" + model + "}");
  save(out / "tok-digits.json", '\1',
       R"({"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},{"type":"ByteLevel"}]},)" +
           model + "}");
  std::string spm;
  for (const char* p : {"<unk>", "<s>", "</s>", "\xe2\x96\x81" "a", "b"})
    spm += pb_len(1, pb_len(1, p) + std::string("\x15\x00\x00\x80\xbf\x18\x01", 7));
  spm += pb_len(2, std::string("\x18\x02\xc0\x02\x00", 5));
  spm += pb_len(3, std::string("\x18\x00", 2));
  save(out / "tokenizer.model", '\2', spm);
  return 0;
}
