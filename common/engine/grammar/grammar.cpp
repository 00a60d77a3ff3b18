// Grammar builder: interning, prefix trees for string sets, validation, pruning, flattening.
#include "engine/grammar/grammar.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace nurl::grammar {

namespace {

std::string show_set(const ByteSet& s) {
  auto hex = [](unsigned b) {
    const char* d = "0123456789abcdef";
    return std::string("\\x") + d[b >> 4] + d[b & 15];
  };
  auto one = [&](unsigned b) {
    if (b >= 0x21 && b < 0x7f && b != '\\' && b != ']' && b != '[' && b != '-') return std::string(1, static_cast<char>(b));
    return hex(b);
  };
  int n = 0;
  for (unsigned b = 0; b < 256; ++b) n += s.has(static_cast<uint8_t>(b));
  if (n == 1)
    for (unsigned b = 0; b < 256; ++b)
      if (s.has(static_cast<uint8_t>(b))) return "'" + one(b) + "'";
  std::string out = "[";
  for (unsigned b = 0; b < 256;) {
    if (!s.has(static_cast<uint8_t>(b))) {
      ++b;
      continue;
    }
    unsigned e = b;
    while (e + 1 < 256 && s.has(static_cast<uint8_t>(e + 1))) ++e;
    out += one(b);
    if (e > b) out += "-" + one(e);
    b = e + 1;
  }
  return out + "]";
}

uint64_t sat_add(uint64_t a, uint64_t b) {
  return std::min(Grammar::kNoEnd, a + b);
}  // a, b <= kNoEnd
uint64_t sat_mul(uint64_t a, uint64_t n) {
  if (a == 0 || n == 0) return 0;
  return a > Grammar::kNoEnd / n ? Grammar::kNoEnd : std::min(Grammar::kNoEnd, a * n);
}

}  // namespace

// Shortest derivations (Knuth's generalisation of Dijkstra's algorithm to grammars): a rule's
// length is final when it is the smallest in the queue, since an alternative's length is a sum
// over its items and never less than any of them. An alternative enters the queue once all the
// rules it needs are final; repetitions need their body `min` times.
void Grammar::compute_lengths() {
  const size_t n = n_rules(), n_alts = alt_starts_.size();
  std::vector<RuleId> owner(n_alts);
  for (RuleId r = 0; r < n; ++r)
    for (uint32_t a = rule_alts_[r]; a < rule_alts_[r + 1]; ++a) owner[a] = r;
  std::vector<uint64_t> partial(n_alts, 0);
  std::vector<uint32_t> waiting(n_alts, 0);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> uses(n);  // rule -> (alternative, times)
  using Entry = std::pair<uint64_t, RuleId>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  for (uint32_t a = 0; a < n_alts; ++a) {
    for (uint32_t p = alt_starts_[a]; elems_[p].kind != Elem::end; ++p) {
      const Elem& e = elems_[p];
      if (e.kind == Elem::bytes) {
        partial[a] = sat_add(partial[a], 1);
      } else if (e.kind == Elem::ref) {
        uses[e.arg].push_back({a, 1});
        ++waiting[a];
      } else if (reps_[e.arg].min > 0) {
        uses[reps_[e.arg].body].push_back({a, reps_[e.arg].min});
        ++waiting[a];
      }
    }
    if (waiting[a] == 0) queue.push({partial[a], owner[a]});
  }
  min_len_.assign(n, kNoEnd);
  std::vector<char> settled(n, 0);
  while (!queue.empty()) {
    const auto [len, r] = queue.top();
    queue.pop();
    if (settled[r]) continue;
    settled[r] = 1;
    min_len_[r] = len;
    for (const auto& [a, times] : uses[r]) {
      partial[a] = sat_add(partial[a], sat_mul(len, times));
      if (--waiting[a] == 0) queue.push({partial[a], owner[a]});
    }
  }
  rest_len_.assign(elems_.size(), 0);
  for (uint32_t a = 0; a < n_alts; ++a) {
    uint32_t end = alt_starts_[a];
    while (elems_[end].kind != Elem::end) ++end;
    for (uint32_t p = end; p-- > alt_starts_[a];) {
      const Elem& e = elems_[p];
      const uint64_t here = e.kind == Elem::bytes ? 1
                            : e.kind == Elem::ref ? min_len_[e.arg]
                                                  : sat_mul(min_len_[reps_[e.arg].body], reps_[e.arg].min);
      rest_len_[p] = sat_add(here, rest_len_[p + 1]);
    }
  }
}

RuleId Grammar::rule_of(uint32_t pos) const {
  auto it = std::upper_bound(rule_first_elem_.begin(), rule_first_elem_.end(), pos);
  return static_cast<RuleId>(it - rule_first_elem_.begin() - 1);
}

std::string Grammar::dump() const {
  std::string out;
  for (RuleId r = 0; r < n_rules(); ++r) {
    out += names_[r] + " ::=";
    bool first = true;
    for (uint32_t p : alts(r)) {
      out += first ? " " : " | ";
      first = false;
      bool empty = true;
      for (; elems_[p].kind != Elem::end; ++p) {
        const Elem& e = elems_[p];
        if (!empty) out += " ";
        empty = false;
        if (e.kind == Elem::bytes) out += show_set(sets_[e.arg]);
        else if (e.kind == Elem::ref) out += names_[e.arg];
        else {
          const Repeat& rp = reps_[e.arg];
          out += names_[rp.body] + "{" + std::to_string(rp.min) + "," +
                 (rp.max == kUnbounded ? std::string() : std::to_string(rp.max)) + "}";
        }
      }
      if (empty) out += "\"\"";
    }
    out += "\n";
  }
  return out;
}

RuleId Builder::declare(std::string name) {
  names_.push_back(std::move(name));
  rules_.emplace_back();
  defined_.push_back(false);
  return static_cast<RuleId>(names_.size() - 1);
}

void Builder::define(RuleId r, std::vector<Seq> alternatives) {
  for (const auto& s : alternatives) n_items_ += s.size() + 1;
  rules_[r] = std::move(alternatives);
  defined_[r] = true;
}

RuleId Builder::rule(std::string name, std::vector<Seq> alternatives) {
  RuleId r = declare(std::move(name));
  define(r, std::move(alternatives));
  return r;
}

Item Builder::bytes(const ByteSet& s) {
  // Literals (single bytes) are most items: a direct table; the few ranges are searched.
  int single = -1, count = 0;
  for (unsigned b = 0; b < 256 && count < 2; ++b)
    if (s.has(static_cast<uint8_t>(b))) single = static_cast<int>(b), ++count;
  if (count == 1 && single_[static_cast<size_t>(single)] != kUnbounded)
    return Item{Elem::bytes, single_[static_cast<size_t>(single)]};
  if (count != 1) {
    auto it = std::find(sets_.begin(), sets_.end(), s);
    if (it != sets_.end()) return Item{Elem::bytes, static_cast<uint32_t>(it - sets_.begin())};
  }
  sets_.push_back(s);
  const auto id = static_cast<uint32_t>(sets_.size() - 1);
  if (count == 1) single_[static_cast<size_t>(single)] = id;
  return Item{Elem::bytes, id};
}

Item Builder::repeat(RuleId body, uint32_t min, uint32_t max) {
  reps_.push_back(Repeat{body, min, max});
  return Item{Elem::rep, static_cast<uint32_t>(reps_.size() - 1)};
}

Item Builder::repeat(Seq body, uint32_t min, uint32_t max, std::string name) {
  return repeat(rule(std::move(name), {std::move(body)}), min, max);
}

Item Builder::optional(Seq body, std::string name) { return ref(rule(std::move(name), {std::move(body), {}})); }

Seq Builder::literal(std::string_view s) {
  Seq out;
  append(out, s);
  return out;
}

void Builder::append(Seq& to, std::string_view s) {
  for (char c : s) to.push_back(byte(static_cast<uint8_t>(c)));
}

RuleId Builder::one_of(const std::vector<std::string>& input, std::string name) {
  std::vector<std::string> s = input;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  int counter = 0;
  // Alternatives for the strings s[lo, hi), which share their first d bytes.
  auto alts = [&](auto& self, size_t lo, size_t hi, size_t d) -> std::vector<Seq> {
    std::vector<Seq> out;
    size_t i = lo;
    if (i < hi && s[i].size() == d) {
      out.push_back({});
      ++i;
    }
    while (i < hi) {
      const char b = s[i][d];
      size_t j = i;
      while (j < hi && s[j][d] == b) ++j;
      size_t e = d + 1;  // the group's common prefix, up to where one of them ends
      while (true) {
        bool same = true;
        for (size_t k = i; k < j && same; ++k) same = s[k].size() > e && s[k][e] == s[i][e];
        if (!same) break;
        ++e;
      }
      Seq seq = literal(std::string_view(s[i]).substr(d, e - d));
      if (j - i == 1 && s[i].size() == e) {
        out.push_back(std::move(seq));
      } else {
        RuleId child = rule(name + "-" + std::to_string(++counter), self(self, i, j, e));
        seq.push_back(ref(child));
        out.push_back(std::move(seq));
      }
      i = j;
    }
    return out;
  };
  return rule(name, alts(alts, 0, s.size(), 0));
}

Result<Grammar> Builder::build(RuleId root) const {
  const size_t n = rules_.size();
  if (n_items_ > limits_.max_elems)
    return Error(Code::invalid_argument, "the grammar is too large (" + std::to_string(n_items_) + " items; limit " +
                                             std::to_string(limits_.max_elems) + ")");
  if (n > limits_.max_rules)
    return Error(Code::invalid_argument, "the grammar has too many rules (" + std::to_string(n) + "; limit " +
                                             std::to_string(limits_.max_rules) + ")");
  for (size_t r = 0; r < n; ++r)
    if (!defined_[r]) return Error(Code::internal, "grammar rule " + names_[r] + " is declared but never defined");

  // Nullable and productive rules (fixpoints).
  std::vector<char> nullable(n, 0), productive(n, 0);
  auto item_nullable = [&](const Item& it) {
    if (it.kind == Elem::bytes) return false;
    if (it.kind == Elem::ref) return nullable[it.arg] != 0;
    return reps_[it.arg].min == 0 || nullable[reps_[it.arg].body] != 0;
  };
  auto item_productive = [&](const Item& it) {
    if (it.kind == Elem::bytes) return !sets_[it.arg].empty();
    if (it.kind == Elem::ref) return productive[it.arg] != 0;
    return reps_[it.arg].min == 0 || productive[reps_[it.arg].body] != 0;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      for (const Seq& alt : rules_[r]) {
        if (!nullable[r] && std::all_of(alt.begin(), alt.end(), item_nullable)) nullable[r] = 1, changed = true;
        if (!productive[r] && std::all_of(alt.begin(), alt.end(), item_productive)) productive[r] = 1, changed = true;
      }
    }
  }
  for (const Repeat& rp : reps_)
    if (nullable[rp.body])
      return Error(Code::invalid_argument, "a repetition of " + names_[rp.body] + " can match the empty string");
  if (!productive[root])
    return Error(Code::invalid_argument,
                 "the schema admits no finite document (a recursive $ref without a base case, or an empty enum)");

  // Pruned rules: alternatives with an item that cannot finish are dropped; an optional
  // repetition of such a body is dropped from its alternative.
  std::vector<std::vector<Seq>> pruned(n);
  for (size_t r = 0; r < n; ++r) {
    for (const Seq& alt : rules_[r]) {
      Seq keep;
      bool dead = false;
      for (const Item& it : alt) {
        if (it.kind == Elem::rep && !productive[reps_[it.arg].body]) continue;  // min == 0 here
        if (!item_productive(it)) {
          dead = true;
          break;
        }
        keep.push_back(it);
      }
      if (!dead) pruned[r].push_back(std::move(keep));
    }
  }

  // Left recursion: a rule that reaches itself through a nullable prefix.
  std::vector<std::vector<uint32_t>> left(n);
  for (size_t r = 0; r < n; ++r) {
    for (const Seq& alt : pruned[r]) {
      for (const Item& it : alt) {
        if (it.kind == Elem::ref) left[r].push_back(it.arg);
        if (it.kind == Elem::rep) left[r].push_back(reps_[it.arg].body);
        if (!item_nullable(it)) break;
      }
    }
  }
  std::vector<char> color(n, 0);  // 0 new, 1 on the path, 2 done
  for (size_t start = 0; start < n; ++start) {
    if (color[start]) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{static_cast<uint32_t>(start), 0}};
    color[start] = 1;
    while (!stack.empty()) {
      auto& [r, i] = stack.back();
      if (i == left[r].size()) {
        color[r] = 2;
        stack.pop_back();
        continue;
      }
      uint32_t s = left[r][i++];
      if (color[s] == 1)
        return Error(Code::invalid_argument, "rule " + names_[s] +
                                                 " is left-recursive (a $ref cycle that consumes no input)");
      if (color[s] == 0) {
        color[s] = 1;
        stack.push_back({s, 0});
      }
    }
  }

  Grammar g;
  g.sets_ = sets_;
  g.reps_ = reps_;
  g.names_ = names_;
  g.root_ = root;
  g.rule_alts_.push_back(0);
  for (size_t r = 0; r < n; ++r) {
    g.rule_first_elem_.push_back(static_cast<uint32_t>(g.elems_.size()));
    for (const Seq& alt : pruned[r]) {
      g.alt_starts_.push_back(static_cast<uint32_t>(g.elems_.size()));
      for (const Item& it : alt) g.elems_.push_back(Elem{it.kind, it.arg});
      g.elems_.push_back(Elem{Elem::end, 0});
    }
    g.rule_alts_.push_back(static_cast<uint32_t>(g.alt_starts_.size()));
  }
  g.compute_lengths();
  return g;
}

}  // namespace nurl::grammar
