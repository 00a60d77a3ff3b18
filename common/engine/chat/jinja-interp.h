// The Jinja evaluator: walks the syntax tree over jinja::Value with Jinja2's scoping (a for-loop
// iteration and a macro call get their own scope; if-blocks do not; namespace() objects are the
// one way to carry state out of a loop). Every evaluation step, nesting level, output byte and
// heap byte is counted against Limits, so a hostile template ends in an Error, never a hang.
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engine/chat/jinja-ast.h"
#include "engine/chat/jinja-value.h"

namespace nurl::jinja {

struct Limits {
  // Expression evaluations + statements + loop iterations, plus one per 64 bytes of every string
  // value produced and one per 8 items iterated, so that time is bounded as well as the count.
  uint64_t max_steps = 5'000'000;
  int max_depth = 500;                // nested evaluation frames (macro recursion included)
  size_t max_output = 16u << 20;      // bytes of any one output buffer / string value
  size_t max_heap = 256u << 20;       // bytes charged to lists, dicts and their elements
};

// Returns the local calendar time that strftime_now() formats.
using Clock = std::function<std::tm()>;

class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) {}
  const Value* lookup(const std::string& name) const;
  void set(const std::string& name, Value v) { vars_[name] = std::move(v); }

 private:
  std::shared_ptr<Scope> parent_;
  std::unordered_map<std::string, Value> vars_;
};

// Call arguments: positional then keyword, as written.
struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;

  // Positional i, else keyword `name`; null when neither was given.
  const Value* get(size_t i, std::string_view name) const;
  const Value* kwarg(std::string_view name) const;
};

class Interp {
 public:
  Interp(const Limits& limits, Clock clock) : limits_(limits), clock_(std::move(clock)), heap_(limits.max_heap) {}

  Heap& heap() { return heap_; }
  const Limits& limits() const { return limits_; }
  const Clock& clock() const { return clock_; }

  // A root scope holding the global functions (range, namespace, raise_exception, ...).
  Result<std::shared_ptr<Scope>> make_globals();
  Result<std::string> render(const Body& body, std::shared_ptr<Scope> scope);

  // Operations builtins need.
  Result<Value> getattr(const Value& obj, const std::string& name);
  Result<Value> getitem(const Value& obj, const Value& key);
  Result<std::vector<Value>> iterate(const Value& v);
  Result<Value> call(const Value& fn, Args& args);
  Result<Value> make_list(std::vector<Value> items, bool tuple = false);
  Result<Value> make_string(std::string s);  // fails when s is over the size limit
  Result<void> step();
  Result<void> work(uint64_t units);  // `units` steps at once, for work proportional to data size

 private:
  enum class Flow { normal, break_, continue_ };

  Limits limits_;
  Clock clock_;
  Heap heap_;
  uint64_t steps_ = 0;
  int depth_ = 0;
  bool located_ = false;  // the innermost failing node has prefixed its position

  Result<Flow> exec_body(const Body& body, const std::shared_ptr<Scope>& scope, std::string& out);
  Result<Flow> exec(const Stmt& s, const std::shared_ptr<Scope>& scope, std::string& out);
  Result<Flow> exec_inner(const Stmt& s, const std::shared_ptr<Scope>& scope, std::string& out);
  Result<Flow> exec_for(const Stmt& s, const std::shared_ptr<Scope>& scope, std::string& out);
  Result<void> assign(const Expr& target, const Value& v, const std::shared_ptr<Scope>& scope);
  Result<Value> apply_filters(const std::vector<ExprPtr>& filters, Value input, const std::shared_ptr<Scope>& scope);

  Result<Value> eval(const Expr& e, const std::shared_ptr<Scope>& scope);
  Result<Value> eval_inner(const Expr& e, const std::shared_ptr<Scope>& scope);
  Result<Value> eval_call(const Expr& e, const std::shared_ptr<Scope>& scope, const Value* caller);
  Result<Args> eval_args(const Expr& e, size_t first, const std::shared_ptr<Scope>& scope);
  Result<Value> eval_binary(const Expr& e, const std::shared_ptr<Scope>& scope);
  Result<Value> eval_compare(const Expr& e, const std::shared_ptr<Scope>& scope);
  Result<Value> slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
  Result<Value> call_macro(const Callable& fn, Args& args);

  Error locate(const Error& err, int line, int col);
  Result<void> append(std::string& out, std::string_view s) const;
};

// Builtins (jinja-builtins.cpp).
Result<Value> call_filter(Interp& in, const std::string& name, const Value& input, Args& args);
Result<bool> call_test(Interp& in, const std::string& name, const Value& input, Args& args);
bool has_method(const Value& self, const std::string& name);
Result<Value> call_method(Interp& in, const Value& self, const std::string& name, Args& args);
extern const char* const kGlobalFunctions[];  // null-terminated list of global function names
Result<Value> call_global(Interp& in, const std::string& name, Args& args);

// Python binary operators shared by the evaluator and filters (sum).
Result<Value> binary_op(Interp& in, const std::string& op, const Value& a, const Value& b);
Result<bool> contains(const Value& container, const Value& item);
Error undefined_error(const Value& v);

}  // namespace nurl::jinja
