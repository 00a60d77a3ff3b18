// The Jinja interpreter's value type and the Python semantics it must reproduce: truthiness,
// equality, ordering, str()/repr() exactly as CPython prints them, and json.dumps for tojson.
// Lists, dicts and callables live in a per-render Heap (an arena with a byte budget) and are
// shared by reference, as in Python; a Value is a cheap handle. Nothing outlives the Heap.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"

namespace nurl::jinja {

// Python's TypeError, the way the renderer reports one.
inline Error type_error(std::string_view msg) { return Error(Code::invalid_argument, "TypeError: " + std::string(msg)); }

struct ListObj;
struct DictObj;
struct Callable;
struct LoopState;

// `undefined` is Jinja's Undefined (prints empty, is falsy, iterates as empty, fails on use);
// `ns` is namespace(); `list` also carries tuples (ListObj::tuple).
enum class Kind : uint8_t { undefined, none, boolean, integer, floating, string, list, dict, ns, callable, loop };

class Value {
 public:
  Value() = default;  // undefined, no hint
  static Value undefined(std::string hint) { Value v; v.s_ = std::move(hint); return v; }
  static Value none() { Value v; v.kind_ = Kind::none; return v; }
  static Value boolean(bool b) { Value v; v.kind_ = Kind::boolean; v.i_ = b; return v; }
  static Value integer(int64_t i) { Value v; v.kind_ = Kind::integer; v.i_ = i; return v; }
  static Value floating(double f) { Value v; v.kind_ = Kind::floating; v.f_ = f; return v; }
  static Value string(std::string s) { Value v; v.kind_ = Kind::string; v.s_ = std::move(s); return v; }
  // A "safe" string (markupsafe.Markup): `+` with a plain string HTML-escapes the plain side.
  static Value markup(std::string s) { Value v = string(std::move(s)); v.markup_ = true; return v; }
  static Value list(ListObj* l) { Value v; v.kind_ = Kind::list; v.p_ = l; return v; }
  static Value dict(DictObj* d) { Value v; v.kind_ = Kind::dict; v.p_ = d; return v; }
  static Value ns(DictObj* d) { Value v; v.kind_ = Kind::ns; v.p_ = d; return v; }
  static Value callable(Callable* c) { Value v; v.kind_ = Kind::callable; v.p_ = c; return v; }
  static Value loop(LoopState* l) { Value v; v.kind_ = Kind::loop; v.p_ = l; return v; }

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_markup() const { return kind_ == Kind::string && markup_; }
  bool is_list() const { return kind_ == Kind::list; }
  bool is_dict() const { return kind_ == Kind::dict; }
  // Python's numbers: bool is an int.
  bool is_int_like() const { return kind_ == Kind::integer || kind_ == Kind::boolean; }
  bool is_number() const { return is_int_like() || kind_ == Kind::floating; }

  bool as_bool() const { return i_ != 0; }
  int64_t as_int() const { return i_; }  // integer or boolean
  double as_float() const { return kind_ == Kind::floating ? f_ : static_cast<double>(i_); }
  const std::string& str() const { return s_; }  // string, or the hint of an undefined
  ListObj* list() const { return static_cast<ListObj*>(p_); }
  DictObj* dict() const { return static_cast<DictObj*>(p_); }  // dict or ns
  Callable* fn() const { return static_cast<Callable*>(p_); }
  LoopState* loop_state() const { return static_cast<LoopState*>(p_); }

 private:
  Kind kind_ = Kind::undefined;
  bool markup_ = false;
  union {
    int64_t i_ = 0;
    double f_;
  };
  std::string s_;
  void* p_ = nullptr;
};

struct ListObj {
  std::vector<Value> items;
  bool tuple = false;
  const char* view = nullptr;  // "dict_items"/"dict_keys"/"dict_values": only how repr() prints it
  // Set when Jinja2 would hand out a lazy iterator (map, select, unique, reverse...): such a value
  // is always truthy, has no len() and prints as an object, exactly what templates observe.
  const char* lazy = nullptr;  // Python's type name: "generator", "list_reverseiterator"
};

struct Stmt;
class Scope;

// Functions: globals (range, namespace, raise_exception...), bound methods ('a'.upper), macros,
// a call block's `caller`, and loop.cycle.
enum class CallableKind : uint8_t { builtin, method, macro, caller, loop_cycle };
struct Callable {
  CallableKind kind = CallableKind::builtin;
  std::string name;               // builtin or method name, macro name
  Value self;                     // method: the object it is bound to
  const Stmt* node = nullptr;     // macro / caller: its definition (owned by the template)
  // macro / caller: the scope it was defined in, kept alive while the callable exists. Scopes hold
  // values, and values never own callables (the Heap does), so this makes no ownership cycle.
  std::shared_ptr<Scope> closure;
  LoopState* loop = nullptr;      // loop_cycle
};

// The state behind `loop`: the (filtered) items and the current position.
struct LoopState {
  std::vector<Value> items;
  int64_t index0 = 0;
  int depth0 = 0;
};

// Insertion-ordered dict (Python 3.7+). String keys are indexed; other keys are rare (literal
// dicts with int keys) and found by a scan with Python equality.
struct DictObj {
  std::vector<std::pair<Value, Value>> entries;
  std::unordered_map<std::string, size_t> str_index;

  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(const Value& key, Value v);
  bool erase(const Value& key);
};

// The per-render arena. Every allocation and every element stored into a container is charged
// against max_bytes so a template cannot exhaust memory; charge() fails once the budget is spent.
class Heap {
 public:
  explicit Heap(size_t max_bytes) : max_bytes_(max_bytes) {}
  Result<void> charge(size_t bytes);
  Result<ListObj*> new_list(bool tuple = false);
  Result<DictObj*> new_dict();
  Result<Callable*> new_callable();
  Result<LoopState*> new_loop();

 private:
  size_t max_bytes_;
  size_t used_ = 0;
  std::vector<std::unique_ptr<ListObj>> lists_;
  std::vector<std::unique_ptr<DictObj>> dicts_;
  std::vector<std::unique_ptr<Callable>> callables_;
  std::vector<std::unique_ptr<LoopState>> loops_;
};

// Approximate bytes a value adds to a container (for Heap::charge).
size_t value_cost(const Value& v);

// Python semantics. Containers nest at most kMaxNesting deep in printing/comparing (a list may
// contain itself through append); deeper structures give an Error rather than a stack overflow.
constexpr int kMaxNesting = 256;

bool truthy(const Value& v);
const char* type_name(const Value& v);              // Python's: 'str', 'NoneType', 'dict', ...
Result<bool> py_eq(const Value& a, const Value& b);  // ==
Result<int> py_compare(const Value& a, const Value& b, const char* op);  // <0, 0, >0 or TypeError
Result<std::string> py_str(const Value& v);          // str(v); undefined prints as ""
Result<std::string> py_repr(const Value& v);         // repr(v)
std::string float_repr(double d);                    // repr(float)
std::string string_repr(std::string_view s);         // repr(str)
std::string html_escape(std::string_view s);         // markupsafe.escape: & < > " '

struct JsonOptions {
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_sep = ", ";        // json.dumps defaults: ", " (", " -> "," with indent)
  std::string key_sep = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(v, ...) as Python prints it; undefined, namespaces and callables are TypeErrors.
Result<std::string> to_json(const Value& v, const JsonOptions& opt);

}  // namespace nurl::jinja
