// libFuzzer target: any bytes as a `format` (a JSON schema, or "json"). Compiling must end in a
// grammar or an Error, within bounded time; a grammar is then driven along the input's own bytes
// and through a token filter over a small vocabulary, checking that every token the filter allows
// is accepted by the matcher, and finished along the tokens that start a shortest completion, each
// of which must bring the document exactly its length closer (the distance), ending complete.
// Findings: crashes, sanitizer reports, hangs, a filter/matcher disagreement.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "engine/grammar/json-schema.h"
#include "engine/grammar/token-filter.h"

namespace {

std::shared_ptr<const nurl::grammar::VocabTrie> vocab() {
  static const auto v = [] {
    std::vector<std::string> p;
    for (int b = 0; b < 256; ++b) p.push_back(std::string(1, static_cast<char>(b)));
    for (const char* s : {"{\"", "\":", "\",", "\"}", "true", "null", "[1", "12", "-0.", "e+", "\\u00", "é", " \n", "  "})
      p.push_back(s);
    p.push_back("");  // end of generation
    return std::make_shared<const nurl::grammar::VocabTrie>(std::move(p));
  }();
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  nurl::grammar::Limits limits;
  limits.max_elems = 1u << 16;
  limits.max_rules = 1u << 13;
  auto g = nurl::grammar::compile_format(in, limits);
  if (!g.ok()) return 0;
  auto grammar = std::make_shared<const nurl::grammar::Grammar>(std::move(*g));
  {
    nurl::grammar::Matcher m(grammar, 64);
    for (char c : in)
      if (!m.advance(std::string_view(&c, 1))) break;
  }
  const int32_t eog = vocab()->n_vocab() - 1;
  auto f = std::make_shared<nurl::grammar::TokenFilter>(grammar, vocab(), std::vector<int32_t>{eog},
                                                        std::vector<nurl::grammar::SpecialToken>{});
  nurl::grammar::Constraint c(f);
  std::vector<uint64_t> mask(f->n_words());
  for (size_t step = 0; step < 64; ++step) {
    c.mask(mask);
    int32_t pick = -1;
    const size_t want = step < size ? data[step] : step;
    size_t seen = 0;
    for (int32_t id = 0; id < vocab()->n_vocab(); ++id) {
      if (!((mask[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1)) continue;
      if (id != eog && !c.matcher().accepts(vocab()->piece(id))) std::abort();  // the filter allowed a rejected token
      if (seen++ == want % 97 || pick < 0) pick = id;
    }
    if (pick < 0 || pick == eog) break;
    if (!c.accept(pick)) std::abort();
    if ((c.distance() == 0) != c.can_finish()) std::abort();  // distance 0 is exactly "complete"
  }
  // Finish the document the shortest way (bounded: a huge minItems can need megabytes).
  for (size_t step = 0; step < 4096 && c.distance() > 0; ++step) {
    const uint64_t d = c.distance();
    c.mask_shortest(mask);
    int32_t pick = -1;
    for (int32_t id = 0; id < eog && pick < 0; ++id)
      if ((mask[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1) pick = id;
    if (pick < 0) break;  // the stack depth limit can cut a completion
    if (!c.accept(pick)) std::abort();
    if (c.distance() + vocab()->piece(pick).size() != d) std::abort();
    if ((c.distance() == 0) != c.can_finish()) std::abort();
  }
  return 0;
}
