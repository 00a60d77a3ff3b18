// Statement execution and expression evaluation. Errors carry the position of the innermost node
// that failed ("line L, column C"); the first failure wins because nothing in Jinja recovers.
#include "engine/chat/jinja-interp.h"

#include <cmath>
#include <limits>

#include "engine/chat/py-string.h"

namespace nurl::jinja {

Error undefined_error(const Value& v) {
  return Error(Code::invalid_argument, "UndefinedError: " + (v.str().empty() ? std::string("value is undefined") : v.str()));
}

const Value* Scope::lookup(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent_.get()) {
    auto it = s->vars_.find(name);
    if (it != s->vars_.end()) return &it->second;
  }
  return nullptr;
}

const Value* Args::get(size_t i, std::string_view name) const {
  if (i < pos.size()) return &pos[i];
  return kwarg(name);
}

const Value* Args::kwarg(std::string_view name) const {
  for (const auto& [k, v] : kw)
    if (k == name) return &v;
  return nullptr;
}

// ---- infrastructure --------------------------------------------------------------------------

Result<void> Interp::step() {
  if (++steps_ > limits_.max_steps)
    return Error(Code::invalid_argument,
                 "template exceeded its step limit of " + std::to_string(limits_.max_steps) + " (endless loop?)");
  return ok();
}

Result<void> Interp::work(uint64_t units) {
  steps_ += units;
  if (steps_ > limits_.max_steps)
    return Error(Code::invalid_argument,
                 "template exceeded its step limit of " + std::to_string(limits_.max_steps) + " (endless loop?)");
  return ok();
}

Result<void> Interp::append(std::string& out, std::string_view s) const {
  if (out.size() + s.size() > limits_.max_output)
    return Error(Code::invalid_argument, "template output exceeds " + std::to_string(limits_.max_output) + " bytes");
  out.append(s);
  return ok();
}

Error Interp::locate(const Error& err, int line, int col) {
  located_ = true;
  return Error(err.code, "template error at line " + std::to_string(line) + ", column " + std::to_string(col) +
                             ": " + err.msg);
}

Result<Value> Interp::make_list(std::vector<Value> items, bool tuple) {
  size_t cost = 0;
  for (const auto& v : items) cost += value_cost(v);
  NURL_TRY(heap_.charge(cost));
  NURL_ASSIGN(ListObj * l, heap_.new_list(tuple));
  l->items = std::move(items);
  return Value::list(l);
}

Result<Value> Interp::make_string(std::string s) {
  if (s.size() > limits_.max_output)
    return Error(Code::invalid_argument, "string value exceeds " + std::to_string(limits_.max_output) + " bytes");
  return Value::string(std::move(s));
}

Result<std::shared_ptr<Scope>> Interp::make_globals() {
  auto scope = std::make_shared<Scope>(nullptr);
  for (const char* const* n = kGlobalFunctions; *n; ++n) {
    NURL_ASSIGN(Callable * c, heap_.new_callable());
    c->kind = CallableKind::builtin;
    c->name = *n;
    scope->set(*n, Value::callable(c));
  }
  return scope;
}

Result<std::string> Interp::render(const Body& body, std::shared_ptr<Scope> scope) {
  std::string out;
  NURL_TRY(exec_body(body, scope, out));
  return out;
}

// ---- statements ------------------------------------------------------------------------------

Result<Interp::Flow> Interp::exec_body(const Body& body, const std::shared_ptr<Scope>& scope, std::string& out) {
  for (const auto& s : body) {
    NURL_ASSIGN(Flow f, exec(*s, scope, out));
    if (f != Flow::normal) return f;
  }
  return Flow::normal;
}

Result<Interp::Flow> Interp::exec(const Stmt& s, const std::shared_ptr<Scope>& scope, std::string& out) {
  if (depth_ >= limits_.max_depth)
    return locate(Error(Code::invalid_argument, "template nesting exceeds " + std::to_string(limits_.max_depth) +
                                                    " levels (runaway recursion?)"),
                  s.line, s.col);
  ++depth_;
  auto r = exec_inner(s, scope, out);
  --depth_;
  if (!r.ok() && !located_) return locate(r.error(), s.line, s.col);
  return r;
}

Result<Interp::Flow> Interp::exec_inner(const Stmt& s, const std::shared_ptr<Scope>& scope, std::string& out) {
  NURL_TRY(step());
  switch (s.kind) {
    case StmtKind::text:
      NURL_TRY(append(out, s.text));
      return Flow::normal;
    case StmtKind::output: {
      NURL_ASSIGN(Value v, eval(*s.expr, scope));
      NURL_ASSIGN(std::string str, py_str(v));
      NURL_TRY(append(out, str));
      return Flow::normal;
    }
    case StmtKind::if_:
      for (const auto& br : s.branches) {
        NURL_ASSIGN(Value c, eval(*br.cond, scope));
        if (truthy(c)) return exec_body(br.body, scope, out);
      }
      return exec_body(s.else_body, scope, out);
    case StmtKind::for_: return exec_for(s, scope, out);
    case StmtKind::set: {
      NURL_ASSIGN(Value v, eval(*s.expr, scope));
      NURL_TRY(assign(*s.target, v, scope));
      return Flow::normal;
    }
    case StmtKind::set_block: {
      std::string buf;
      NURL_TRY(exec_body(s.body, scope, buf));
      NURL_ASSIGN(Value v, apply_filters(s.filters, Value::string(std::move(buf)), scope));
      NURL_TRY(assign(*s.target, v, scope));
      return Flow::normal;
    }
    case StmtKind::macro: {
      NURL_ASSIGN(Callable * c, heap_.new_callable());
      c->kind = CallableKind::macro;
      c->name = s.text;
      c->node = &s;
      c->closure = scope;
      scope->set(s.text, Value::callable(c));
      return Flow::normal;
    }
    case StmtKind::call_block: {
      NURL_ASSIGN(Callable * c, heap_.new_callable());
      c->kind = CallableKind::caller;
      c->name = "caller";
      c->node = &s;
      c->closure = scope;
      Value caller = Value::callable(c);
      NURL_ASSIGN(Value v, eval_call(*s.expr, scope, &caller));
      NURL_ASSIGN(std::string str, py_str(v));
      NURL_TRY(append(out, str));
      return Flow::normal;
    }
    case StmtKind::filter: {
      std::string buf;
      NURL_TRY(exec_body(s.body, scope, buf));
      NURL_ASSIGN(Value v, apply_filters(s.filters, Value::string(std::move(buf)), scope));
      NURL_ASSIGN(std::string str, py_str(v));
      NURL_TRY(append(out, str));
      return Flow::normal;
    }
    case StmtKind::break_: return Flow::break_;
    case StmtKind::continue_: return Flow::continue_;
    case StmtKind::block: return exec_body(s.body, scope, out);
  }
  return Flow::normal;
}

Result<Interp::Flow> Interp::exec_for(const Stmt& s, const std::shared_ptr<Scope>& scope, std::string& out) {
  NURL_ASSIGN(Value seq, eval(*s.expr, scope));
  NURL_ASSIGN(std::vector<Value> items, iterate(seq));
  if (s.cond) {  // `for x in xs if cond`: filter first, so loop.length/last see the kept items
    std::vector<Value> kept;
    for (auto& item : items) {
      NURL_TRY(step());
      auto tmp = std::make_shared<Scope>(scope);
      NURL_TRY(assign(*s.target, item, tmp));
      NURL_ASSIGN(Value c, eval(*s.cond, tmp));
      if (truthy(c)) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) return exec_body(s.else_body, scope, out);
  size_t cost = 0;
  for (const auto& v : items) cost += value_cost(v);
  NURL_TRY(heap_.charge(cost));
  NURL_ASSIGN(LoopState * loop, heap_.new_loop());
  loop->items = std::move(items);
  for (size_t i = 0; i < loop->items.size(); ++i) {
    NURL_TRY(step());
    loop->index0 = static_cast<int64_t>(i);
    auto iter = std::make_shared<Scope>(scope);
    iter->set("loop", Value::loop(loop));
    NURL_TRY(assign(*s.target, loop->items[i], iter));
    NURL_ASSIGN(Flow f, exec_body(s.body, iter, out));
    if (f == Flow::break_) break;
  }
  return Flow::normal;
}

Result<void> Interp::assign(const Expr& target, const Value& v, const std::shared_ptr<Scope>& scope) {
  switch (target.kind) {
    case ExprKind::name: scope->set(target.name, v); return ok();
    case ExprKind::attr: {
      const Value* ns = scope->lookup(target.args[0]->name);
      if (!ns || ns->kind() != Kind::ns)
        return Error(Code::invalid_argument, "cannot assign attribute on non-namespace object '" +
                                                 target.args[0]->name + "'");
      NURL_TRY(heap_.charge(value_cost(v)));
      ns->dict()->set(Value::string(target.name), v);
      return ok();
    }
    case ExprKind::tuple: {
      NURL_ASSIGN(std::vector<Value> parts, iterate(v));
      if (parts.size() != target.args.size())
        return Error(Code::invalid_argument, std::string("ValueError: ") +
                                                 (parts.size() > target.args.size() ? "too many" : "not enough") +
                                                 " values to unpack (expected " + std::to_string(target.args.size()) +
                                                 ", got " + std::to_string(parts.size()) + ")");
      for (size_t i = 0; i < parts.size(); ++i) NURL_TRY(assign(*target.args[i], parts[i], scope));
      return ok();
    }
    default: return Error(Code::invalid_argument, "cannot assign to this expression");
  }
}

Result<Value> Interp::apply_filters(const std::vector<ExprPtr>& filters, Value input,
                                    const std::shared_ptr<Scope>& scope) {
  for (const auto& f : filters) {
    NURL_ASSIGN(Args args, eval_args(*f, 1, scope));
    NURL_ASSIGN(input, call_filter(*this, f->name, input, args));
  }
  return input;
}

// ---- expressions -----------------------------------------------------------------------------

Result<Value> Interp::eval(const Expr& e, const std::shared_ptr<Scope>& scope) {
  if (depth_ >= limits_.max_depth)
    return locate(Error(Code::invalid_argument, "template nesting exceeds " + std::to_string(limits_.max_depth) +
                                                    " levels (runaway recursion?)"),
                  e.line, e.col);
  ++depth_;
  auto r = eval_inner(e, scope);
  --depth_;
  if (!r.ok() && !located_) return locate(r.error(), e.line, e.col);
  // Work grows with data: a string result was copied or built, so it costs a step per 64 bytes.
  if (r.ok() && r->is_string() && r->str().size() >= 64) {
    auto w = work(r->str().size() / 64);
    if (!w.ok()) return locate(w.error(), e.line, e.col);
  }
  return r;
}

Result<Args> Interp::eval_args(const Expr& e, size_t first, const std::shared_ptr<Scope>& scope) {
  Args a;
  for (size_t i = first; i < e.args.size(); ++i) {
    NURL_ASSIGN(Value v, eval(*e.args[i], scope));
    a.pos.push_back(std::move(v));
  }
  for (const auto& [k, x] : e.kwargs) {
    NURL_ASSIGN(Value v, eval(*x, scope));
    a.kw.emplace_back(k, std::move(v));
  }
  return a;
}

Result<Value> Interp::eval_inner(const Expr& e, const std::shared_ptr<Scope>& scope) {
  NURL_TRY(step());
  switch (e.kind) {
    case ExprKind::literal: return e.value;
    case ExprKind::name: {
      const Value* v = scope->lookup(e.name);
      if (!v) return Value::undefined("'" + e.name + "' is undefined");
      return *v;
    }
    case ExprKind::attr: {
      NURL_ASSIGN(Value obj, eval(*e.args[0], scope));
      return getattr(obj, e.name);
    }
    case ExprKind::item: {
      NURL_ASSIGN(Value obj, eval(*e.args[0], scope));
      NURL_ASSIGN(Value key, eval(*e.args[1], scope));
      return getitem(obj, key);
    }
    case ExprKind::slice: {
      NURL_ASSIGN(Value obj, eval(*e.args[0], scope));
      Value parts[3] = {Value::none(), Value::none(), Value::none()};
      for (int i = 0; i < 3; ++i)
        if (e.args[static_cast<size_t>(i) + 1]) {
          NURL_ASSIGN(parts[i], eval(*e.args[static_cast<size_t>(i) + 1], scope));
        }
      return slice(obj, parts[0], parts[1], parts[2]);
    }
    case ExprKind::call: return eval_call(e, scope, nullptr);
    case ExprKind::filter: {
      NURL_ASSIGN(Value input, eval(*e.args[0], scope));
      NURL_ASSIGN(Args args, eval_args(e, 1, scope));
      return call_filter(*this, e.name, input, args);
    }
    case ExprKind::test: {
      NURL_ASSIGN(Value input, eval(*e.args[0], scope));
      NURL_ASSIGN(Args args, eval_args(e, 1, scope));
      NURL_ASSIGN(bool r, call_test(*this, e.name, input, args));
      return Value::boolean(r != e.negated);
    }
    case ExprKind::unary: {
      NURL_ASSIGN(Value x, eval(*e.args[0], scope));
      if (e.name == "not") return Value::boolean(!truthy(x));
      if (x.is_undefined()) return undefined_error(x);
      if (x.kind() == Kind::floating) return Value::floating(e.name == "-" ? -x.as_float() : x.as_float());
      if (x.is_int_like()) {
        if (e.name == "+") return Value::integer(x.as_int());
        if (x.as_int() == std::numeric_limits<int64_t>::min()) return Error(Code::invalid_argument, "integer overflow");
        return Value::integer(-x.as_int());
      }
      return type_error(std::string("bad operand type for unary ") + e.name + ": '" + type_name(x) + "'");
    }
    case ExprKind::binary: return eval_binary(e, scope);
    case ExprKind::compare: return eval_compare(e, scope);
    case ExprKind::cond: {
      NURL_ASSIGN(Value c, eval(*e.args[0], scope));
      if (truthy(c)) return eval(*e.args[1], scope);
      if (e.args[2]) return eval(*e.args[2], scope);
      return Value::undefined("the inline if-expression on line " + std::to_string(e.line) +
                              " evaluated to false and no else section was defined.");
    }
    case ExprKind::list:
    case ExprKind::tuple: {
      std::vector<Value> items;
      for (const auto& x : e.args) {
        NURL_ASSIGN(Value v, eval(*x, scope));
        items.push_back(std::move(v));
      }
      return make_list(std::move(items), e.kind == ExprKind::tuple);
    }
    case ExprKind::dict: {
      NURL_ASSIGN(DictObj * d, heap_.new_dict());
      for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
        NURL_ASSIGN(Value k, eval(*e.args[i], scope));
        NURL_ASSIGN(Value v, eval(*e.args[i + 1], scope));
        if (k.kind() == Kind::list && !k.list()->tuple) return type_error("unhashable type: 'list'");
        if (k.kind() == Kind::dict) return type_error("unhashable type: 'dict'");
        NURL_TRY(heap_.charge(value_cost(k) + value_cost(v)));
        d->set(k, std::move(v));
      }
      return Value::dict(d);
    }
  }
  return Value();
}

Result<Value> Interp::eval_call(const Expr& e, const std::shared_ptr<Scope>& scope, const Value* caller) {
  const Expr& callee = *e.args[0];
  NURL_ASSIGN(Args args, eval_args(e, 1, scope));
  if (caller) args.kw.emplace_back("caller", *caller);
  // Method calls on str/list/dict dispatch directly, without allocating a bound method.
  if (callee.kind == ExprKind::attr) {
    NURL_ASSIGN(Value obj, eval(*callee.args[0], scope));
    if ((obj.is_string() || obj.is_list() || obj.is_dict()) && has_method(obj, callee.name))
      return call_method(*this, obj, callee.name, args);
    NURL_ASSIGN(Value fn, getattr(obj, callee.name));
    return call(fn, args);
  }
  NURL_ASSIGN(Value fn, eval(callee, scope));
  return call(fn, args);
}

Result<Value> Interp::call(const Value& fn, Args& args) {
  if (fn.is_undefined()) return undefined_error(fn);
  if (fn.kind() != Kind::callable) return type_error(std::string("'") + type_name(fn) + "' object is not callable");
  const Callable& c = *fn.fn();
  switch (c.kind) {
    case CallableKind::builtin: return call_global(*this, c.name, args);
    case CallableKind::method: return call_method(*this, c.self, c.name, args);
    case CallableKind::macro:
    case CallableKind::caller: return call_macro(c, args);
    case CallableKind::loop_cycle: {
      if (args.pos.empty()) return type_error("no items for cycling given");
      return args.pos[static_cast<size_t>(c.loop->index0) % args.pos.size()];
    }
  }
  return Value();
}

Result<Value> Interp::call_macro(const Callable& c, Args& args) {
  const Stmt& def = *c.node;
  auto scope = std::make_shared<Scope>(c.closure);
  std::vector<Value> varargs;
  size_t npos = 0;
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    if (i < args.pos.size()) {
      scope->set(p.name, args.pos[i]);
      ++npos;
    } else if (const Value* kw = args.kwarg(p.name)) {
      scope->set(p.name, *kw);
    } else if (p.default_value) {
      NURL_ASSIGN(Value v, eval(*p.default_value, scope));
      scope->set(p.name, v);
    } else {
      scope->set(p.name, Value::undefined("parameter '" + p.name + "' was not provided"));
    }
  }
  for (size_t i = npos; i < args.pos.size(); ++i) varargs.push_back(args.pos[i]);
  NURL_ASSIGN(DictObj * kwargs, heap_.new_dict());
  for (const auto& [k, v] : args.kw) {
    bool is_param = false;
    for (const auto& p : def.params) is_param = is_param || p.name == k;
    if (k == "caller" && c.kind == CallableKind::macro) {
      scope->set("caller", v);
    } else if (!is_param) {
      NURL_TRY(heap_.charge(value_cost(v)));
      kwargs->set(Value::string(k), v);
    }
  }
  NURL_ASSIGN(Value va, make_list(std::move(varargs), true));
  scope->set("varargs", va);
  scope->set("kwargs", Value::dict(kwargs));
  std::string buf;
  NURL_TRY(exec_body(def.body, scope, buf));
  return Value::string(std::move(buf));
}

Result<Value> Interp::eval_binary(const Expr& e, const std::shared_ptr<Scope>& scope) {
  NURL_ASSIGN(Value a, eval(*e.args[0], scope));
  if (e.name == "and") {
    if (!truthy(a)) return a;
    return eval(*e.args[1], scope);
  }
  if (e.name == "or") {
    if (truthy(a)) return a;
    return eval(*e.args[1], scope);
  }
  NURL_ASSIGN(Value b, eval(*e.args[1], scope));
  return binary_op(*this, e.name, a, b);
}

Result<Value> Interp::eval_compare(const Expr& e, const std::shared_ptr<Scope>& scope) {
  NURL_ASSIGN(Value left, eval(*e.args[0], scope));
  for (size_t i = 0; i < e.ops.size(); ++i) {
    NURL_ASSIGN(Value right, eval(*e.args[i + 1], scope));
    const std::string& op = e.ops[i];
    bool r;
    if (op == "==" || op == "!=") {
      NURL_ASSIGN(bool eq, py_eq(left, right));
      r = (op == "==") == eq;
    } else if (op == "in" || op == "not in") {
      NURL_ASSIGN(bool in, contains(right, left));
      r = (op == "in") == in;
    } else {
      NURL_ASSIGN(int c, py_compare(left, right, op.c_str()));
      r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
    }
    if (!r) return Value::boolean(false);
    left = std::move(right);
  }
  return Value::boolean(true);
}

// ---- attribute, item, slice, iteration -------------------------------------------------------

Result<Value> Interp::getattr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case Kind::undefined: return undefined_error(obj);
    case Kind::dict:
      if (has_method(obj, name)) break;
      if (const Value* v = obj.dict()->find(std::string_view(name))) return *v;
      return Value::undefined("'dict object' has no attribute '" + name + "'");
    case Kind::ns:
      if (const Value* v = obj.dict()->find(std::string_view(name))) return *v;
      return Value::undefined("'Namespace' object has no attribute '" + name + "'");
    case Kind::loop: {
      const LoopState& l = *obj.loop_state();
      const int64_t n = static_cast<int64_t>(l.items.size());
      const int64_t i = l.index0;
      if (name == "index") return Value::integer(i + 1);
      if (name == "index0") return Value::integer(i);
      if (name == "revindex") return Value::integer(n - i);
      if (name == "revindex0") return Value::integer(n - i - 1);
      if (name == "first") return Value::boolean(i == 0);
      if (name == "last") return Value::boolean(i == n - 1);
      if (name == "length") return Value::integer(n);
      if (name == "depth") return Value::integer(l.depth0 + 1);
      if (name == "depth0") return Value::integer(l.depth0);
      if (name == "previtem")
        return i > 0 ? l.items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item");
      if (name == "nextitem")
        return i + 1 < n ? l.items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item");
      if (name == "cycle") {
        NURL_ASSIGN(Callable * c, heap_.new_callable());
        c->kind = CallableKind::loop_cycle;
        c->name = "cycle";
        c->loop = obj.loop_state();
        return Value::callable(c);
      }
      return Value::undefined("'LoopContext' object has no attribute '" + name + "'");
    }
    case Kind::none: return Value::undefined("'None' has no attribute '" + name + "'");
    default: break;
  }
  if (has_method(obj, name)) {
    NURL_ASSIGN(Callable * c, heap_.new_callable());
    c->kind = CallableKind::method;
    c->name = name;
    c->self = obj;
    return Value::callable(c);
  }
  return Value::undefined(std::string("'") + type_name(obj) + " object' has no attribute '" + name + "'");
}

Result<Value> Interp::getitem(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case Kind::undefined: return undefined_error(obj);
    case Kind::dict: {
      if (const Value* v = obj.dict()->find(key)) return *v;
      break;
    }
    case Kind::list:
    case Kind::string: {
      // Iterators and dict views are not subscriptable in Python.
      if (!key.is_int_like() || (obj.is_list() && (obj.list()->lazy || obj.list()->view))) break;
      const bool is_list = obj.is_list();
      const int64_t n = is_list ? static_cast<int64_t>(obj.list()->items.size())
                                : static_cast<int64_t>(py::length(obj.str()));
      int64_t i = key.as_int();
      if (i < 0) i += n;
      if (i < 0 || i >= n)
        return Value::undefined(std::string("'") + type_name(obj) + " object' has no element " +
                                std::to_string(key.as_int()));
      if (is_list) return obj.list()->items[static_cast<size_t>(i)];
      if (py::is_ascii(obj.str())) return Value::string(obj.str().substr(static_cast<size_t>(i), 1));
      std::u32string u = py::decode(obj.str());
      return Value::string(py::encode(std::u32string_view(u).substr(static_cast<size_t>(i), 1)));
    }
    case Kind::loop:
    case Kind::ns:
      if (key.is_string()) return getattr(obj, key.str());
      break;
    default: break;
  }
  if (key.is_string() && obj.kind() != Kind::none) {
    // Jinja2 falls back to an attribute: d['items'] is the method when there is no such key.
    if (has_method(obj, key.str())) return getattr(obj, key.str());
  }
  NURL_ASSIGN(std::string ks, py_str(key));
  return Value::undefined(std::string("'") + type_name(obj) + " object' has no attribute '" + ks + "'");
}

Result<Value> Interp::slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
  if (obj.is_undefined()) return undefined_error(obj);
  auto as_index = [](const Value& v, const char* what) -> Result<std::optional<int64_t>> {
    if (v.is_none()) return std::optional<int64_t>();
    if (!v.is_int_like())
      return type_error(std::string("slice ") + what + " must be an integer or None, not " + type_name(v));
    return std::optional<int64_t>(v.as_int());
  };
  NURL_ASSIGN(auto start, as_index(start_v, "start"));
  NURL_ASSIGN(auto stop, as_index(stop_v, "stop"));
  NURL_ASSIGN(auto stepo, as_index(step_v, "step"));
  const int64_t step = stepo.value_or(1);
  if (step == 0) return Error(Code::invalid_argument, "ValueError: slice step cannot be zero");

  std::u32string u;
  int64_t n;
  if (obj.is_list() && !obj.list()->lazy && !obj.list()->view) {
    n = static_cast<int64_t>(obj.list()->items.size());
  } else if (obj.is_string()) {
    u = py::decode(obj.str());
    n = static_cast<int64_t>(u.size());
  } else {
    return Value::undefined(std::string("'") + type_name(obj) + " object' is not subscriptable");
  }
  // CPython's PySlice_AdjustIndices.
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  const int64_t b = adjust(start, step < 0 ? n - 1 : 0);
  const int64_t e = adjust(stop, step < 0 ? -1 : n);
  std::vector<size_t> idx;
  if (step > 0)
    for (int64_t i = b; i < e; i += step) idx.push_back(static_cast<size_t>(i));
  else
    for (int64_t i = b; i > e; i += step) idx.push_back(static_cast<size_t>(i));
  if (obj.is_list()) {
    std::vector<Value> items;
    items.reserve(idx.size());
    for (size_t i : idx) items.push_back(obj.list()->items[i]);
    return make_list(std::move(items), obj.list()->tuple);
  }
  std::u32string r;
  r.reserve(idx.size());
  for (size_t i : idx) r.push_back(u[i]);
  return Value::string(py::encode(r));
}

Result<std::vector<Value>> Interp::iterate(const Value& v) {
  if (v.is_list()) NURL_TRY(work(v.list()->items.size() / 8));
  if (v.is_dict()) NURL_TRY(work(v.dict()->entries.size() / 8));
  if (v.is_string()) NURL_TRY(work(v.str().size() / 8));
  switch (v.kind()) {
    case Kind::undefined: return std::vector<Value>{};
    case Kind::list: return v.list()->items;
    case Kind::dict: {
      std::vector<Value> keys;
      keys.reserve(v.dict()->entries.size());
      for (const auto& kv : v.dict()->entries) keys.push_back(kv.first);
      return keys;
    }
    case Kind::string: {
      std::vector<Value> chars;
      const std::string& s = v.str();
      for (size_t i = 0; i < s.size();) {
        size_t j = i + 1;
        while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
        chars.push_back(Value::string(s.substr(i, j - i)));
        i = j;
      }
      return chars;
    }
    default: return type_error(std::string("'") + type_name(v) + "' object is not iterable");
  }
}

}  // namespace nurl::jinja
