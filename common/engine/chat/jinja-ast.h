// The Jinja syntax tree. One node type for expressions and one for statements keeps the parser
// and evaluator small; each kind documents which fields it uses. Every node has its position so
// that run-time errors name a line and column.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "engine/chat/jinja-value.h"

namespace nurl::jinja {

enum class ExprKind : uint8_t {
  literal,   // value
  name,      // name
  attr,      // args[0].name
  item,      // args[0][args[1]]
  slice,     // args[0][args[1]:args[2]:args[3]]  (absent parts are null)
  call,      // args[0](args[1..], kwargs)
  filter,    // args[0] | name(args[1..], kwargs); args[0] is null in filter blocks
  test,      // args[0] is [not] name(args[1..])   (negated)
  unary,     // name ("-", "+", "not") args[0]
  binary,    // args[0] name args[1]: + - * / // % ** ~ and or
  compare,   // args[0] ops[0] args[1] ops[1] args[2] ...  (chained, Python style)
  cond,      // args[1] if args[0] else args[2] (args[2] may be null: undefined)
  list,      // [args...]
  tuple,     // (args...)
  dict,      // {args[0]: args[1], args[2]: args[3], ...}
};

struct Expr {
  ExprKind kind = ExprKind::literal;
  int line = 0, col = 0;
  std::string name;
  Value value;  // literal: none, bool, int, float or string only (never heap objects)
  bool negated = false;
  std::vector<std::unique_ptr<Expr>> args;
  std::vector<std::pair<std::string, std::unique_ptr<Expr>>> kwargs;
  std::vector<std::string> ops;  // compare
};
using ExprPtr = std::unique_ptr<Expr>;

enum class StmtKind : uint8_t {
  text,        // text
  output,      // {{ expr }}
  if_,         // branches (cond, body)...; else_body
  for_,        // for target in expr [if cond]: body; else_body
  set,         // set target = expr
  set_block,   // set target [| filters]: body
  macro,       // macro name(params): body
  call_block,  // call(params) expr: body  (body becomes `caller`)
  filter,      // filter filters: body
  break_,
  continue_,
  block,       // body (generation blocks render their body unchanged)
};

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Branch {
  ExprPtr cond;
  Body body;
};

struct Stmt {
  StmtKind kind = StmtKind::text;
  int line = 0, col = 0;
  std::string text;  // text; macro name
  ExprPtr expr;      // output, for (iterable), set, call_block (the call)
  ExprPtr target;    // for / set / set_block: name, attr (ns.x) or tuple of names
  ExprPtr cond;      // for: inline filter
  std::vector<Branch> branches;
  Body body, else_body;
  std::vector<Param> params;  // macro, call_block
  std::vector<ExprPtr> filters;  // set_block / filter: filter exprs whose args[0] is null
};

// Parses a whole template. Nesting deeper than kMaxParseDepth is refused (no stack overflow).
constexpr int kMaxParseDepth = 200;
Result<Body> parse(std::string_view source);

}  // namespace nurl::jinja
