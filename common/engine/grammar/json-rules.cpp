// JSON building blocks (see json-rules.h).
#include "engine/grammar/json-rules.h"

#include <charconv>
#include <cmath>
#include <map>
#include <tuple>

#include "core/json-text.h"

namespace nurl::grammar {

namespace {

constexpr uint32_t kMaxDigits = 16;   // integer part digits beyond any bound, fraction digits
constexpr uint32_t kMaxIndent = 20;   // spaces after a newline in whitespace

bool all_of_digit(const std::string& s, char d) {
  for (char c : s)
    if (c != d) return false;
  return true;
}

std::string strip_leading_zeros(std::string s) {
  size_t i = 0;
  while (i + 1 < s.size() && s[i] == '0') ++i;
  return s.substr(i);
}

// Digit strings (no leading zeros) compared as numbers.
int compare_int(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

std::string inc(std::string s) {
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != '9') {
      ++s[i];
      return s;
    }
    s[i] = '0';
  }
  return "1" + s;
}

// s - 1 for s >= 1.
std::string dec(std::string s) {
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != '0') {
      --s[i];
      return strip_leading_zeros(s);
    }
    s[i] = '9';
  }
  return "0";
}

}  // namespace

Result<Decimal> Decimal::from_json(const nlohmann::ordered_json& v) {
  Decimal d;
  if (v.is_number_unsigned()) {
    d.int_digits = std::to_string(v.get<uint64_t>());
    return d;
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    d.neg = x < 0;
    d.int_digits = x < 0 ? std::to_string(-(x + 1)) : std::to_string(x);
    if (x < 0) d.int_digits = inc(d.int_digits);  // |INT64_MIN| without overflow
    return d;
  }
  if (!v.is_number_float()) return Error(Code::invalid_argument, "expected a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) return Error(Code::invalid_argument, "a bound is not a finite number");
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  if (s[0] == '-') {
    d.neg = true;
    s.erase(0, 1);
  }
  const size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  const int exp = std::stoi(s.substr(e + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  const int point = 1 + exp;  // digits before the decimal point
  std::string ip, fp;
  if (point <= 0) {
    ip = "0";
    fp = std::string(static_cast<size_t>(-point), '0') + digits;
  } else if (point >= static_cast<int>(digits.size())) {
    ip = digits + std::string(static_cast<size_t>(point) - digits.size(), '0');
  } else {
    ip = digits.substr(0, static_cast<size_t>(point));
    fp = digits.substr(static_cast<size_t>(point));
  }
  while (!fp.empty() && fp.back() == '0') fp.pop_back();
  d.int_digits = strip_leading_zeros(ip);
  d.frac_digits = fp;
  if (d.is_zero()) d.neg = false;
  return d;
}

int compare(const Decimal& a, const Decimal& b) {
  if (a.neg != b.neg) return a.neg ? -1 : 1;
  int c = compare_int(a.int_digits, b.int_digits);
  if (c == 0) c = a.frac_digits < b.frac_digits ? -1 : a.frac_digits > b.frac_digits ? 1 : 0;
  return a.neg ? -c : c;
}

Item JsonRules::ws() {
  if (!ws_) {
    RuleId sp = b_.rule("space", {b_.literal(" ")});
    Seq nl = b_.literal("\n");
    nl.push_back(b_.repeat(sp, 0, kMaxIndent));
    ws_ = b_.ref(b_.rule("ws", {{}, b_.literal(" "), std::move(nl)}));
  }
  return *ws_;
}

RuleId JsonRules::json_char() {
  if (!char_) {
    ByteSet plain = ByteSet::range(0x20, 0x7f);
    plain.remove('"');
    plain.remove('\\');
    auto r = [&](uint8_t lo, uint8_t hi) { return b_.bytes(ByteSet::range(lo, hi)); };
    Item hex = b_.bytes([] {
      ByteSet s = ByteSet::range('0', '9');
      s.add_range('a', 'f');
      s.add_range('A', 'F');
      return s;
    }());
    // \uXXXX except the surrogate range D800-DFFF.
    ByteSet first = ByteSet::range('0', '9');
    first.add_range('a', 'c');
    first.add_range('A', 'C');
    ByteSet ef = ByteSet::range('e', 'f');
    ef.add_range('E', 'F');
    ByteSet d = ByteSet::of('d');
    d.add('D');
    RuleId u = b_.rule("unicode-escape", {{b_.bytes(first), hex, hex, hex},
                                          {b_.bytes(ef), hex, hex, hex},
                                          {b_.bytes(d), r('0', '7'), hex, hex}});
    ByteSet simple;
    for (char c : std::string_view("\"\\/bfnrt")) simple.add(static_cast<uint8_t>(c));
    RuleId esc = b_.rule("escape", {{b_.bytes(simple)}, {b_.byte('u'), b_.ref(u)}});
    const Item cont = r(0x80, 0xbf);
    char_ = b_.rule("char", {{b_.bytes(plain)},
                             {r(0xc2, 0xdf), cont},
                             {b_.byte(0xe0), r(0xa0, 0xbf), cont},
                             {r(0xe1, 0xec), cont, cont},
                             {b_.byte(0xed), r(0x80, 0x9f), cont},
                             {r(0xee, 0xef), cont, cont},
                             {b_.byte(0xf0), r(0x90, 0xbf), cont, cont},
                             {r(0xf1, 0xf3), cont, cont, cont},
                             {b_.byte(0xf4), r(0x80, 0x8f), cont, cont},
                             {b_.byte('\\'), b_.ref(esc)}});
  }
  return *char_;
}

Item JsonRules::string_any() {
  if (!string_any_) {
    Seq s = b_.literal("\"");
    s.push_back(b_.repeat(json_char(), 0, kUnbounded));
    s.push_back(b_.byte('"'));
    string_any_ = b_.ref(b_.rule("string", {std::move(s)}));
  }
  return *string_any_;
}

Item JsonRules::string_length(uint32_t min, uint32_t max) {
  if (min == 0 && max == kUnbounded) return string_any();
  Seq s = b_.literal("\"");
  s.push_back(b_.repeat(json_char(), min, max));
  s.push_back(b_.byte('"'));
  return b_.ref(b_.rule("string-" + std::to_string(min) + "-" + std::to_string(max), {std::move(s)}));
}

RuleId JsonRules::digit() {
  if (!digit_) digit_ = b_.rule("digit", {{b_.bytes(ByteSet::range('0', '9'))}});
  return *digit_;
}

Item JsonRules::digits(uint32_t min, uint32_t max) { return b_.repeat(digit(), min, max); }

Item JsonRules::integer_any() {
  if (!integer_any_) {
    RuleId uint = b_.rule("uint", {b_.literal("0"), {b_.bytes(ByteSet::range('1', '9')), digits(0, kMaxDigits - 1)}});
    Seq neg = b_.literal("-");
    neg.push_back(b_.ref(uint));
    integer_any_ = b_.ref(b_.rule("integer", {{b_.ref(uint)}, std::move(neg)}));
  }
  return *integer_any_;
}

Item JsonRules::number_any() {
  if (!number_any_) {
    Seq frac = b_.literal(".");
    frac.push_back(digits(1, kMaxDigits));
    ByteSet e = ByteSet::of('e');
    e.add('E');
    ByteSet sign = ByteSet::of('+');
    sign.add('-');
    Item sign_opt = b_.optional({b_.bytes(sign)}, "exponent-sign");
    Seq exp{b_.bytes(e), sign_opt, digits(1, 2)};  // |exponent| < 100: every parser reads it as a finite double
    number_any_ = b_.ref(b_.rule(
        "number", {{integer_any(), b_.optional(std::move(frac), "fraction"), b_.optional(std::move(exp), "exponent")}}));
  }
  return *number_any_;
}

Item JsonRules::boolean() { return b_.ref(b_.rule("boolean", {b_.literal("true"), b_.literal("false")})); }

Item JsonRules::null() { return b_.ref(b_.rule("null", {b_.literal("null")})); }

Item JsonRules::any_value() {
  if (!any_value_) {
    RuleId value = b_.declare("value");
    Seq member{string_any(), ws(), b_.byte(':'), ws(), b_.ref(value)};
    Seq more_member{ws(), b_.byte(','), ws()};
    more_member.insert(more_member.end(), member.begin(), member.end());
    Seq members = member;
    members.push_back(b_.repeat(std::move(more_member), 0, kUnbounded, "more-members"));
    members.push_back(ws());
    members.push_back(b_.byte('}'));
    RuleId object = b_.rule("object", {{b_.byte('{'), ws(), b_.ref(b_.rule("object-body", {b_.literal("}"), members}))}});
    Seq more_value{ws(), b_.byte(','), ws(), b_.ref(value)};
    Seq values{b_.ref(value), b_.repeat(std::move(more_value), 0, kUnbounded, "more-values"), ws(), b_.byte(']')};
    RuleId array = b_.rule("array", {{b_.byte('['), ws(), b_.ref(b_.rule("array-body", {b_.literal("]"), values}))}});
    b_.define(value, {{b_.ref(object)},
                      {b_.ref(array)},
                      {string_any()},
                      {number_any()},
                      b_.literal("true"),
                      b_.literal("false"),
                      b_.literal("null")});
    any_value_ = b_.ref(value);
    any_object_ = b_.ref(object);
  }
  return *any_value_;
}

Item JsonRules::any_object() {
  any_value();
  return *any_object_;
}

std::string JsonRules::serialize(const nlohmann::ordered_json& v) {
  return dump_json(v, -1, InvalidUtf8::replace);
}

void JsonRules::same_length(const std::string& a, const std::string& b, Seq prefix, const Seq& suffix,
                            std::vector<Seq>& out) {
  auto finish = [&](Seq s) {
    s.insert(s.end(), suffix.begin(), suffix.end());
    out.push_back(std::move(s));
  };
  if (a == b) {
    b_.append(prefix, a);
    return finish(std::move(prefix));
  }
  if (all_of_digit(a, '0') && all_of_digit(b, '9')) {
    prefix.push_back(digits(static_cast<uint32_t>(a.size()), static_cast<uint32_t>(a.size())));
    return finish(std::move(prefix));
  }
  size_t k = 0;
  while (a[k] == b[k]) ++k;
  b_.append(prefix, a.substr(0, k));
  const size_t n = a.size() - k - 1;
  Seq lo = prefix;
  lo.push_back(b_.byte(static_cast<uint8_t>(a[k])));
  same_length(a.substr(k + 1), std::string(n, '9'), std::move(lo), suffix, out);
  if (b[k] - a[k] > 1) {
    Seq mid = prefix;
    mid.push_back(b_.bytes(ByteSet::range(static_cast<uint8_t>(a[k] + 1), static_cast<uint8_t>(b[k] - 1))));
    if (n > 0) mid.push_back(digits(static_cast<uint32_t>(n), static_cast<uint32_t>(n)));
    finish(std::move(mid));
  }
  Seq hi = prefix;
  hi.push_back(b_.byte(static_cast<uint8_t>(b[k])));
  same_length(std::string(n, '0'), b.substr(k + 1), std::move(hi), suffix, out);
}

void JsonRules::int_range(const std::string& lo, const std::string& hi, std::vector<Seq>& out, const Seq& suffix) {
  for (size_t len = lo.size(); len <= hi.size(); ++len) {
    const std::string a = len == lo.size() ? lo : "1" + std::string(len - 1, '0');
    const std::string b = len == hi.size() ? hi : std::string(len, '9');
    same_length(a, b, {}, suffix, out);
  }
}

Seq JsonRules::fraction(const std::optional<std::string>& lo, bool lo_excl, const std::optional<std::string>& hi,
                        bool hi_excl) {
  if (!lo && !hi) {
    if (!frac_any_) {
      Seq f = b_.literal(".");
      f.push_back(digits(1, kMaxDigits));
      frac_any_ = b_.rule("fraction", {{}, std::move(f)});
    }
    return {b_.ref(*frac_any_)};
  }
  const std::string a = lo.value_or(""), z = hi.value_or("");
  const uint32_t cap = static_cast<uint32_t>(std::max(a.size(), z.size())) + kMaxDigits;
  const int id = ++n_;
  // States: (k digits read, still equal to lo's prefix, still equal to hi's prefix).
  using State = std::tuple<uint32_t, bool, bool>;
  std::map<State, RuleId> rules;
  auto accepting = [&](const State& s) {
    auto [k, ta, tb] = s;
    const bool a_ok = !lo || !ta || (k >= a.size() && !lo_excl);
    const bool b_ok = !hi || !tb || (k < z.size() || !hi_excl);
    return a_ok && b_ok;
  };
  // Alternatives that read one more digit from s (nothing at the length cap).
  auto steps = [&](auto& self, const State& s) -> std::vector<Seq> {
    // Plain variables, not a structured binding: `target` captures them (clang < 16 cannot
    // capture bindings).
    auto [k_, ta_, tb_] = s;
    const auto k = k_;
    const auto ta = ta_;
    const auto tb = tb_;
    std::vector<Seq> alts;
    if (k >= cap) return alts;
    int c = '0';
    while (c <= '9') {
      auto target = [&](int d, State& t) {
        const char ac = k < a.size() ? a[k] : '0', bc = k < z.size() ? z[k] : '0';
        if (ta && d < ac) return false;
        if (tb && d > bc) return false;
        t = State{k + 1, ta && d == ac, tb && d == bc};
        return true;
      };
      State t;
      const bool live = target(c, t);
      int e = c;
      State t2;
      while (e + 1 <= '9' && target(e + 1, t2) == live && (!live || t2 == t)) ++e;
      if (live) {
        Seq seq{b_.bytes(ByteSet::range(static_cast<uint8_t>(c), static_cast<uint8_t>(e)))};
        auto [k2, ta2, tb2] = t;
        if (!ta2 && !tb2) {
          if (cap > k2) seq.push_back(digits(0, cap - k2));
        } else {
          auto it = rules.find(t);
          RuleId r;
          if (it != rules.end()) {
            r = it->second;
          } else {
            r = b_.declare("fraction-" + std::to_string(id) + "-" + std::to_string(k2));
            rules[t] = r;
            std::vector<Seq> sub = self(self, t);
            if (accepting(t)) sub.push_back({});
            b_.define(r, std::move(sub));
          }
          seq.push_back(b_.ref(r));
        }
        alts.push_back(std::move(seq));
      }
      c = e + 1;
    }
    return alts;
  };
  const State start{0, lo.has_value(), hi.has_value()};
  std::vector<Seq> alts;
  if (accepting(start)) alts.push_back({});
  std::vector<Seq> first = steps(steps, start);
  if (!first.empty()) {
    Seq dot = b_.literal(".");
    dot.push_back(b_.ref(b_.rule("fraction-" + std::to_string(id), std::move(first))));
    alts.push_back(std::move(dot));
  }
  return {b_.ref(b_.rule("fraction-" + std::to_string(id) + "-opt", std::move(alts)))};
}

Result<std::vector<Seq>> JsonRules::magnitude(const Bound& lo, const std::optional<Bound>& hi, bool integer) {
  std::vector<Seq> out;
  const std::string& li = lo.value.int_digits;
  const std::string& lf = lo.value.frac_digits;
  if (integer) {
    std::string a = (!lf.empty() || lo.exclusive) ? inc(li) : li;
    std::string z;
    if (hi) {
      const std::string& hint = hi->value.int_digits;
      if (hi->value.frac_digits.empty() && hi->exclusive) {
        if (hint == "0") return out;
        z = dec(hint);
      } else {
        z = hint;
      }
    } else {
      z = std::string(std::max<size_t>(kMaxDigits, a.size() + 1), '9');
    }
    if (compare_int(a, z) <= 0) int_range(a, z, out, {});
    return out;
  }
  std::optional<std::string> lo_frac = lf;
  if (!hi) {
    Seq s = b_.literal(li);
    Seq f = fraction(lo_frac, lo.exclusive, std::nullopt, false);
    s.insert(s.end(), f.begin(), f.end());
    out.push_back(std::move(s));
    int_range(inc(li), std::string(std::max<size_t>(kMaxDigits, li.size() + 1), '9'), out,
              fraction(std::nullopt, false, std::nullopt, false));
    return out;
  }
  const std::string& hi_int = hi->value.int_digits;
  std::optional<std::string> hi_frac = hi->value.frac_digits;
  if (li == hi_int) {
    Seq s = b_.literal(li);
    Seq f = fraction(lo_frac, lo.exclusive, hi_frac, hi->exclusive);
    s.insert(s.end(), f.begin(), f.end());
    out.push_back(std::move(s));
    return out;
  }
  Seq s = b_.literal(li);
  Seq f = fraction(lo_frac, lo.exclusive, std::nullopt, false);
  s.insert(s.end(), f.begin(), f.end());
  out.push_back(std::move(s));
  const std::string mid_lo = inc(li), mid_hi = dec(hi_int);
  if (compare_int(mid_lo, mid_hi) <= 0) int_range(mid_lo, mid_hi, out, fraction(std::nullopt, false, std::nullopt, false));
  Seq t = b_.literal(hi_int);
  Seq g = fraction(std::nullopt, false, hi_frac, hi->exclusive);
  t.insert(t.end(), g.begin(), g.end());
  out.push_back(std::move(t));
  return out;
}

Result<Item> JsonRules::number_in(const std::optional<Bound>& lo, const std::optional<Bound>& hi, bool integer) {
  if (!lo && !hi) return integer ? integer_any() : number_any();
  if (lo && hi) {
    const int c = compare(lo->value, hi->value);
    if (c > 0 || (c == 0 && (lo->exclusive || hi->exclusive)))
      return Error(Code::invalid_argument, "contradictory bounds: the minimum is above the maximum");
  }
  std::vector<Seq> alts;
  // Negative values: magnitudes in [max(-hi, 0), -lo], never zero.
  if (!lo || lo->value.neg) {
    Bound m_lo;  // above 0
    m_lo.exclusive = true;
    if (hi && hi->value.neg) {
      m_lo.value = hi->value;
      m_lo.value.neg = false;
      m_lo.exclusive = hi->exclusive;
    }
    std::optional<Bound> m_hi;
    if (lo) {
      m_hi = *lo;
      m_hi->value.neg = false;
    }
    NURL_ASSIGN(std::vector<Seq> neg, magnitude(m_lo, m_hi, integer));
    for (Seq& s : neg) {
      Seq with = b_.literal("-");
      with.insert(with.end(), s.begin(), s.end());
      alts.push_back(std::move(with));
    }
  }
  // Non-negative values: [max(lo, 0), hi].
  if (!hi || !hi->value.neg) {
    Bound n_lo;  // 0 inclusive
    if (lo && !lo->value.neg) n_lo = *lo;
    if (!(hi && hi->value.is_zero() && hi->exclusive)) {
      NURL_ASSIGN(std::vector<Seq> pos, magnitude(n_lo, hi, integer));
      for (Seq& s : pos) alts.push_back(std::move(s));
    }
  }
  if (alts.empty()) return Error(Code::invalid_argument, "contradictory bounds: no number lies between them");
  return b_.ref(b_.rule(integer ? "integer-range" : "number-range", std::move(alts)));
}

}  // namespace nurl::grammar
