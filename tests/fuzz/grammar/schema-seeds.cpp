// Seed corpus for schema_fuzz: `schema_fuzz_seeds <out-dir> <testdata>` writes a set of schemas
// covering every keyword the compiler handles, and hostile ones (deep, recursive, contradictory).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: schema_fuzz_seeds <out-dir> [testdata-dir]\n";
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  const std::vector<std::string> seeds = {
      "json",
      R"({"type":"object","properties":{"a":{"type":"string","maxLength":3},"b":{"type":"integer","minimum":-5,"maximum":50}},"required":["a"]})",
      R"({"type":"array","items":{"type":"number","exclusiveMinimum":0.5,"maximum":2.25},"minItems":1,"maxItems":4})",
      R"({"enum":["x","xy",1,null,{"k":[true]}]})",
      R"({"anyOf":[{"type":"string","pattern":"^[a-c]+\\d?$"},{"type":"boolean"},{"const":7}]})",
      R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}}},{"required":["a"],"additionalProperties":false}]})",
      R"({"$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}}}},"$ref":"#/$defs/n"})",
      R"({"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]})",
      R"({"type":"string","format":"date-time"})",
      R"({"type":"object","additionalProperties":{"type":"string","format":"uuid"}})",
      R"({"type":"array","prefixItems":[{"type":"string"},{"type":"null"}],"items":false})",
      R"({"type":["integer","null"],"minimum":1e3,"maximum":1e6})",
      R"({"type":"string","minLength":9,"maxLength":2})",
      R"({"type":"array","items":{"type":"array","items":{"type":"array","items":{"type":"array","items":{}}}}})",
  };
  int n = 0;
  for (const auto& s : seeds) {
    std::ofstream o(out / ("seed-" + std::to_string(n++)), std::ios::binary);
    o << s;
  }
  std::cout << n << " seed schemas\n";
  return 0;
}
