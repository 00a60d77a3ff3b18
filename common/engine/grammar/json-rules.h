// The JSON pieces every constraint is built from, as grammar rules: bounded whitespace, one
// string character (UTF-8 validated, escapes), strings with a length range, any value, numbers
// and integers, and numbers within decimal bounds (exact: integer parts by digit ranges, fraction
// parts by digit-by-digit comparison with the bound). Runaway output is bounded where JSON itself
// is not: whitespace runs, digit counts (integer parts up to 16 digits beyond any bound,
// fractions up to 16, exponents up to 2).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine/grammar/grammar.h"

namespace nurl::grammar {

// A decimal number as digits: value = (neg ? -1 : 1) * int_digits.frac_digits.
struct Decimal {
  bool neg = false;
  std::string int_digits = "0";  // no leading zeros
  std::string frac_digits;       // no trailing zeros
  static Result<Decimal> from_json(const nlohmann::ordered_json& v);
  bool is_zero() const { return int_digits == "0" && frac_digits.empty(); }
  bool is_integer() const { return frac_digits.empty(); }
};
int compare(const Decimal& a, const Decimal& b);

struct Bound {
  Decimal value;
  bool exclusive = false;
};

class JsonRules {
 public:
  explicit JsonRules(Builder& b) : b_(b) {}
  Builder& builder() { return b_; }

  Item ws();              // "" | " " | "\n" followed by up to 20 spaces
  RuleId json_char();     // one character of a string's content
  Item string_any();      // "..."
  Item string_length(uint32_t min, uint32_t max);  // in characters (code points)
  Item any_value();       // any JSON value, nesting bounded by the matcher's depth
  Item any_object();      // any JSON object ({...} of any values)
  Item number_any();
  Item integer_any();
  Item boolean();
  Item null();
  // Numbers (or integers) in [lo, hi]; either may be absent. Errors for empty ranges.
  Result<Item> number_in(const std::optional<Bound>& lo, const std::optional<Bound>& hi, bool integer);
  // The value written as canonical JSON (for const and enum).
  static std::string serialize(const nlohmann::ordered_json& v);

 private:
  Item digits(uint32_t min, uint32_t max);
  RuleId digit();
  // Non-negative magnitudes in [lo, hi] (hi absent: unbounded), integer or decimal.
  Result<std::vector<Seq>> magnitude(const Bound& lo, const std::optional<Bound>& hi, bool integer);
  void int_range(const std::string& lo, const std::string& hi, std::vector<Seq>& out, const Seq& suffix);
  void same_length(const std::string& a, const std::string& b, Seq prefix, const Seq& suffix, std::vector<Seq>& out);
  // Optional fraction ("" or "." digits) with lo <= 0.d <= hi (each side optional).
  Seq fraction(const std::optional<std::string>& lo, bool lo_excl, const std::optional<std::string>& hi, bool hi_excl);

  Builder& b_;
  std::optional<Item> ws_, string_any_, any_value_, any_object_, number_any_, integer_any_;
  std::optional<RuleId> char_, digit_, frac_any_;
  int n_ = 0;
};

}  // namespace nurl::grammar
