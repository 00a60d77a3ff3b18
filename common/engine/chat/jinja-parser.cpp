// Recursive-descent parser following Jinja2's grammar and precedence (jinja2/parser.py):
// condexpr < or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary < postfix/filters/tests.
#include <cerrno>
#include <cstdlib>

#include "engine/chat/jinja-ast.h"
#include "engine/chat/jinja-lexer.h"

namespace nurl::jinja {

namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  Result<Body> parse_template() {
    NURL_ASSIGN(Body body, parse_body({}));
    if (cur().type != Tok::eof) return fail(cur(), "unexpected tag");
    return body;
  }

 private:
  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;

  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  void next() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool is_op(const char* op) const { return cur().type == Tok::op && cur().value == op; }
  bool is_name(const char* n) const { return cur().type == Tok::name && cur().value == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }

  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::eof: return "end of template";
      case Tok::text: return "text";
      case Tok::var_begin: return "'{{'";
      case Tok::var_end: return "'}}'";
      case Tok::block_begin: return "'{%'";
      case Tok::block_end: return "'%}'";
      default: return "'" + t.value + "'";
    }
  }

  Error fail(const Token& t, const std::string& msg) const {
    return Error(Code::invalid_argument, "template syntax error at line " + std::to_string(t.line) + ", column " +
                                             std::to_string(t.col) + ": " + msg);
  }
  Error unexpected(const std::string& expected) const {
    return fail(cur(), "unexpected " + describe(cur()) + (expected.empty() ? "" : ", expected " + expected));
  }

  Result<void> expect_op(const char* op) {
    if (!skip_op(op)) return unexpected(std::string("'") + op + "'");
    return ok();
  }
  Result<std::string> expect_name() {
    if (cur().type != Tok::name) return unexpected("a name");
    std::string n = cur().value;
    next();
    return n;
  }
  Result<void> expect_block_end() {
    if (cur().type != Tok::block_end) return unexpected("end of statement block");
    next();
    return ok();
  }

  // Guards recursion depth for both statements and expressions.
  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
  };
  Result<void> check_depth() const {
    if (depth_ > kMaxParseDepth)
      return fail(cur(), "template nested more than " + std::to_string(kMaxParseDepth) + " levels deep");
    return ok();
  }

  // Left-associative chains nest in the tree; long ones would make evaluation recurse deeply.
  Result<void> check_chain(int n) const {
    if (n > kMaxParseDepth) return fail(cur(), "expression chain longer than " + std::to_string(kMaxParseDepth));
    return ok();
  }

  // Postfix nodes (x.a, x[i], x(...)) report errors where their operand starts.
  static void at_operand(Expr& node, const Expr& operand) {
    node.line = operand.line;
    node.col = operand.col;
  }

  ExprPtr make(ExprKind k, const Token& at) const {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = at.line;
    e->col = at.col;
    return e;
  }

  // ---- statements ---------------------------------------------------------------------------

  // Parses until `{% <one of ends> ...` (left unconsumed, positioned at that name) or eof.
  Result<Body> parse_body(std::initializer_list<const char*> ends) {
    DepthGuard g(depth_);
    NURL_TRY(check_depth());
    Body body;
    while (true) {
      const Token& tok = cur();
      if (tok.type == Tok::eof) {
        if (ends.size() != 0) {
          std::string want;
          for (const char* e : ends) want += (want.empty() ? "'" : " or '") + std::string(e) + "'";
          return fail(tok, "unexpected end of template, expected " + want);
        }
        return body;
      }
      if (tok.type == Tok::text) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::text;
        s->line = tok.line;
        s->col = tok.col;
        s->text = tok.value;
        body.push_back(std::move(s));
        next();
        continue;
      }
      if (tok.type == Tok::var_begin) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::output;
        s->line = tok.line;
        s->col = tok.col;
        next();
        NURL_ASSIGN(s->expr, parse_tuple(false, true, false, {}));
        if (cur().type != Tok::var_end) return unexpected("end of print statement");
        next();
        body.push_back(std::move(s));
        continue;
      }
      if (tok.type != Tok::block_begin) return unexpected("");
      const Token& kw = peek();
      if (kw.type == Tok::name)
        for (const char* e : ends)
          if (kw.value == e) {
            next();  // at the name
            return body;
          }
      next();
      NURL_ASSIGN(StmtPtr s, parse_statement());
      body.push_back(std::move(s));
    }
  }

  Result<StmtPtr> parse_statement() {
    const Token at = cur();
    if (at.type != Tok::name) return unexpected("a statement name");
    auto s = std::make_unique<Stmt>();
    s->line = at.line;
    s->col = at.col;
    const std::string& kw = at.value;
    next();
    if (kw == "if") return parse_if(std::move(s));
    if (kw == "for") return parse_for(std::move(s));
    if (kw == "set") return parse_set(std::move(s));
    if (kw == "macro") return parse_macro(std::move(s));
    if (kw == "call") return parse_call_block(std::move(s));
    if (kw == "filter") return parse_filter_block(std::move(s));
    if (kw == "break" || kw == "continue") {
      s->kind = kw == "break" ? StmtKind::break_ : StmtKind::continue_;
      NURL_TRY(expect_block_end());
      return s;
    }
    if (kw == "generation") {
      s->kind = StmtKind::block;
      NURL_TRY(expect_block_end());
      NURL_ASSIGN(s->body, parse_body({"endgeneration"}));
      NURL_TRY(finish_end());
      return s;
    }
    return fail(at, "unknown or unsupported tag '" + kw + "'");
  }

  // At an end name (endif, endfor...): consume it and the block end.
  Result<void> finish_end() {
    next();
    return expect_block_end();
  }

  Result<StmtPtr> parse_if(StmtPtr s) {
    s->kind = StmtKind::if_;
    while (true) {
      Branch br;
      NURL_ASSIGN(br.cond, parse_tuple(false, false, false, {}));
      NURL_TRY(expect_block_end());
      NURL_ASSIGN(br.body, parse_body({"elif", "else", "endif"}));
      s->branches.push_back(std::move(br));
      const std::string end = cur().value;
      next();
      if (end == "elif") continue;
      if (end == "else") {
        NURL_TRY(expect_block_end());
        NURL_ASSIGN(s->else_body, parse_body({"endif"}));
        NURL_TRY(finish_end());
      } else {
        NURL_TRY(expect_block_end());
      }
      return s;
    }
  }

  Result<StmtPtr> parse_for(StmtPtr s) {
    s->kind = StmtKind::for_;
    NURL_ASSIGN(s->target, parse_assign_target(false, {"in"}));
    if (!skip_name("in")) return unexpected("'in'");
    NURL_ASSIGN(s->expr, parse_tuple(false, false, false, {"recursive"}));
    if (skip_name("if")) {
      NURL_ASSIGN(s->cond, parse_expression(true));
    }
    if (is_name("recursive")) return fail(cur(), "recursive loops are not supported");
    NURL_TRY(expect_block_end());
    NURL_ASSIGN(s->body, parse_body({"endfor", "else"}));
    const bool has_else = cur().value == "else";
    NURL_TRY(finish_end());
    if (has_else) {
      NURL_ASSIGN(s->else_body, parse_body({"endfor"}));
      NURL_TRY(finish_end());
    }
    return s;
  }

  Result<StmtPtr> parse_set(StmtPtr s) {
    NURL_ASSIGN(s->target, parse_assign_target(true, {}));
    if (skip_op("=")) {
      s->kind = StmtKind::set;
      NURL_ASSIGN(s->expr, parse_tuple(false, true, false, {}));
      NURL_TRY(expect_block_end());
      return s;
    }
    s->kind = StmtKind::set_block;
    if (s->target->kind != ExprKind::name) return fail(cur(), "a block assignment needs a plain name");
    NURL_TRY(parse_filter_chain(s->filters));
    NURL_TRY(expect_block_end());
    NURL_ASSIGN(s->body, parse_body({"endset"}));
    NURL_TRY(finish_end());
    return s;
  }

  Result<void> parse_filter_chain(std::vector<ExprPtr>& out) {
    while (skip_op("|")) {
      NURL_ASSIGN(ExprPtr f, parse_filter(nullptr));
      out.push_back(std::move(f));
    }
    return ok();
  }

  Result<void> parse_params(std::vector<Param>& params) {
    NURL_TRY(expect_op("("));
    while (!is_op(")")) {
      if (!params.empty()) NURL_TRY(expect_op(","));
      if (is_op(")")) break;
      Param p;
      NURL_ASSIGN(p.name, expect_name());
      if (skip_op("=")) {
        NURL_ASSIGN(p.default_value, parse_expression(true));
      }
      params.push_back(std::move(p));
    }
    next();
    return ok();
  }

  Result<StmtPtr> parse_macro(StmtPtr s) {
    s->kind = StmtKind::macro;
    NURL_ASSIGN(s->text, expect_name());
    NURL_TRY(parse_params(s->params));
    NURL_TRY(expect_block_end());
    NURL_ASSIGN(s->body, parse_body({"endmacro"}));
    NURL_TRY(finish_end());
    return s;
  }

  Result<StmtPtr> parse_call_block(StmtPtr s) {
    s->kind = StmtKind::call_block;
    if (is_op("(")) NURL_TRY(parse_params(s->params));
    NURL_ASSIGN(s->expr, parse_expression(true));
    if (s->expr->kind != ExprKind::call) return fail(cur(), "expected a call after 'call'");
    NURL_TRY(expect_block_end());
    NURL_ASSIGN(s->body, parse_body({"endcall"}));
    NURL_TRY(finish_end());
    return s;
  }

  Result<StmtPtr> parse_filter_block(StmtPtr s) {
    s->kind = StmtKind::filter;
    do {
      NURL_ASSIGN(ExprPtr f, parse_filter(nullptr));
      s->filters.push_back(std::move(f));
    } while (skip_op("|"));
    NURL_TRY(expect_block_end());
    NURL_ASSIGN(s->body, parse_body({"endfilter"}));
    NURL_TRY(finish_end());
    return s;
  }

  // Names, `ns.attr` (set only) or a tuple of those, up to `=`/`in`/block end.
  Result<ExprPtr> parse_assign_target(bool with_namespace, std::initializer_list<const char*> ends) {
    auto one = [&]() -> Result<ExprPtr> {
      const Token at = cur();
      NURL_ASSIGN(std::string n, expect_name());
      auto e = make(ExprKind::name, at);
      e->name = n;
      if (with_namespace && is_op(".")) {
        next();
        auto a = make(ExprKind::attr, at);
        NURL_ASSIGN(a->name, expect_name());
        a->args.push_back(std::move(e));
        return a;
      }
      return e;
    };
    const Token at = cur();
    std::vector<ExprPtr> items;
    bool tuple = false;
    bool paren = skip_op("(");
    while (true) {
      NURL_ASSIGN(ExprPtr e, one());
      items.push_back(std::move(e));
      if (!skip_op(",")) break;
      tuple = true;
      bool end = is_op("=") || is_op(")") || cur().type == Tok::block_end;
      for (const char* n : ends) end = end || is_name(n);
      if (end) break;
    }
    if (paren) NURL_TRY(expect_op(")"));
    if (!tuple && !paren) return std::move(items[0]);
    if (!tuple && items.size() == 1) return std::move(items[0]);
    auto t = make(ExprKind::tuple, at);
    t->args = std::move(items);
    return t;
  }

  // ---- expressions --------------------------------------------------------------------------

  bool tuple_end(std::initializer_list<const char*> extra) const {
    if (cur().type == Tok::var_end || cur().type == Tok::block_end || cur().type == Tok::eof || is_op(")")) return true;
    for (const char* n : extra)
      if (is_name(n)) return true;
    return false;
  }

  // Jinja2's parse_tuple: `a, b` without parentheses is a tuple.
  Result<ExprPtr> parse_tuple(bool simplified, bool with_condexpr, bool explicit_parens,
                              std::initializer_list<const char*> extra) {
    const Token at = cur();
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) NURL_TRY(expect_op(","));
      if (tuple_end(extra)) break;
      NURL_TRY(check_chain(static_cast<int>(items.size()) / 16));
      ExprPtr e;
      if (simplified) {
        NURL_ASSIGN(e, parse_primary());
      } else {
        NURL_ASSIGN(e, parse_expression(with_condexpr));
      }
      items.push_back(std::move(e));
      if (is_op(","))
        is_tuple = true;
      else
        break;
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) return unexpected("an expression");
    }
    auto t = make(ExprKind::tuple, at);
    t->args = std::move(items);
    return t;
  }

  Result<ExprPtr> parse_expression(bool with_condexpr) {
    DepthGuard g(depth_);
    NURL_TRY(check_depth());
    if (!with_condexpr) return parse_or();
    NURL_ASSIGN(ExprPtr e, parse_or());
    while (is_name("if")) {
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr cond, parse_or());
      ExprPtr other;
      if (skip_name("else")) {
        NURL_ASSIGN(other, parse_expression(true));
      }
      auto c = make(ExprKind::cond, at);
      c->args.push_back(std::move(cond));
      c->args.push_back(std::move(e));
      c->args.push_back(std::move(other));
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(const Token& at, std::string op, ExprPtr a, ExprPtr b) {
    auto e = make(ExprKind::binary, at);
    e->name = std::move(op);
    e->args.push_back(std::move(a));
    e->args.push_back(std::move(b));
    return e;
  }

  Result<ExprPtr> parse_or() {
    NURL_ASSIGN(ExprPtr e, parse_and());
    int n = 0;
    while (is_name("or")) {
      NURL_TRY(check_chain(++n));
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr r, parse_and());
      e = binary(at, "or", std::move(e), std::move(r));
    }
    return e;
  }

  Result<ExprPtr> parse_and() {
    NURL_ASSIGN(ExprPtr e, parse_not());
    int n = 0;
    while (is_name("and")) {
      NURL_TRY(check_chain(++n));
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr r, parse_not());
      e = binary(at, "and", std::move(e), std::move(r));
    }
    return e;
  }

  Result<ExprPtr> parse_not() {
    if (is_name("not")) {
      DepthGuard g(depth_);
      NURL_TRY(check_depth());
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr x, parse_not());
      auto e = make(ExprKind::unary, at);
      e->name = "not";
      e->args.push_back(std::move(x));
      return e;
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    const Token at = cur();
    NURL_ASSIGN(ExprPtr first, parse_math1());
    ExprPtr e;
    while (true) {
      std::string op;
      if (cur().type == Tok::op &&
          (cur().value == "==" || cur().value == "!=" || cur().value == "<" || cur().value == "<=" ||
           cur().value == ">" || cur().value == ">=")) {
        op = cur().value;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && peek().type == Tok::name && peek().value == "in") {
        op = "not in";
        next();
        next();
      } else {
        break;
      }
      if (!e) {
        e = make(ExprKind::compare, at);
        e->args.push_back(std::move(first));
      }
      NURL_ASSIGN(ExprPtr r, parse_math1());
      e->ops.push_back(op);
      e->args.push_back(std::move(r));
    }
    return e ? std::move(e) : std::move(first);
  }

  Result<ExprPtr> parse_math1() {
    NURL_ASSIGN(ExprPtr e, parse_concat());
    int n = 0;
    while (is_op("+") || is_op("-")) {
      NURL_TRY(check_chain(++n));
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr r, parse_concat());
      e = binary(at, at.value, std::move(e), std::move(r));
    }
    return e;
  }

  Result<ExprPtr> parse_concat() {
    NURL_ASSIGN(ExprPtr e, parse_math2());
    int n = 0;
    while (is_op("~")) {
      NURL_TRY(check_chain(++n));
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr r, parse_math2());
      e = binary(at, "~", std::move(e), std::move(r));
    }
    return e;
  }

  Result<ExprPtr> parse_math2() {
    NURL_ASSIGN(ExprPtr e, parse_pow());
    int n = 0;
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      NURL_TRY(check_chain(++n));
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr r, parse_pow());
      e = binary(at, at.value, std::move(e), std::move(r));
    }
    return e;
  }

  Result<ExprPtr> parse_pow() {
    NURL_ASSIGN(ExprPtr e, parse_unary(true));
    int n = 0;
    while (is_op("**")) {
      NURL_TRY(check_chain(++n));
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr r, parse_unary(true));
      e = binary(at, "**", std::move(e), std::move(r));
    }
    return e;
  }

  Result<ExprPtr> parse_unary(bool with_filter) {
    DepthGuard g(depth_);
    NURL_TRY(check_depth());
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token at = cur();
      next();
      NURL_ASSIGN(ExprPtr x, parse_unary(false));
      e = make(ExprKind::unary, at);
      e->name = at.value;
      e->args.push_back(std::move(x));
    } else {
      NURL_ASSIGN(e, parse_primary());
    }
    NURL_ASSIGN(e, parse_postfix(std::move(e)));
    if (with_filter) {
      NURL_ASSIGN(e, parse_filter_expr(std::move(e)));
    }
    return e;
  }

  Result<ExprPtr> parse_primary() {
    DepthGuard g(depth_);
    NURL_TRY(check_depth());
    const Token at = cur();
    switch (at.type) {
      case Tok::name: {
        next();
        auto e = make(ExprKind::literal, at);
        if (at.value == "true" || at.value == "True") {
          e->value = Value::boolean(true);
        } else if (at.value == "false" || at.value == "False") {
          e->value = Value::boolean(false);
        } else if (at.value == "none" || at.value == "None") {
          e->value = Value::none();
        } else {
          e->kind = ExprKind::name;
          e->name = at.value;
        }
        return e;
      }
      case Tok::string: {
        std::string s;
        while (cur().type == Tok::string) {  // adjacent literals concatenate
          s += cur().value;
          next();
        }
        auto e = make(ExprKind::literal, at);
        e->value = Value::string(std::move(s));
        return e;
      }
      case Tok::integer: {
        next();
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(at.value.c_str(), &end, 10);
        if (errno == ERANGE) return fail(at, "integer literal out of range");
        auto e = make(ExprKind::literal, at);
        e->value = Value::integer(v);
        return e;
      }
      case Tok::floating: {
        next();
        auto e = make(ExprKind::literal, at);
        e->value = Value::floating(std::strtod(at.value.c_str(), nullptr));
        return e;
      }
      case Tok::op:
        if (at.value == "(") {
          next();
          NURL_ASSIGN(ExprPtr e, parse_tuple(false, true, true, {}));
          NURL_TRY(expect_op(")"));
          return e;
        }
        if (at.value == "[") {
          next();
          auto e = make(ExprKind::list, at);
          while (!is_op("]")) {
            if (!e->args.empty()) NURL_TRY(expect_op(","));
            if (is_op("]")) break;
            NURL_ASSIGN(ExprPtr x, parse_expression(true));
            e->args.push_back(std::move(x));
          }
          next();
          return e;
        }
        if (at.value == "{") {
          next();
          auto e = make(ExprKind::dict, at);
          while (!is_op("}")) {
            if (!e->args.empty()) NURL_TRY(expect_op(","));
            if (is_op("}")) break;
            NURL_ASSIGN(ExprPtr k, parse_expression(true));
            NURL_TRY(expect_op(":"));
            NURL_ASSIGN(ExprPtr v, parse_expression(true));
            e->args.push_back(std::move(k));
            e->args.push_back(std::move(v));
          }
          next();
          return e;
        }
        break;
      default: break;
    }
    return unexpected("an expression");
  }

  Result<ExprPtr> parse_postfix(ExprPtr e) {
    for (int n = 1;; ++n) {
      NURL_TRY(check_chain(n));
      const Token at = cur();
      if (is_op(".")) {
        next();
        if (cur().type == Tok::name) {
          auto a = make(ExprKind::attr, at);
          a->name = cur().value;
          next();
          at_operand(*a, *e);
          a->args.push_back(std::move(e));
          e = std::move(a);
        } else if (cur().type == Tok::integer) {
          auto idx = make(ExprKind::literal, cur());
          idx->value = Value::integer(std::strtoll(cur().value.c_str(), nullptr, 10));
          next();
          auto it = make(ExprKind::item, at);
          at_operand(*it, *e);
          it->args.push_back(std::move(e));
          it->args.push_back(std::move(idx));
          e = std::move(it);
        } else {
          return unexpected("an attribute name");
        }
      } else if (is_op("[")) {
        next();
        NURL_ASSIGN(e, parse_subscript(std::move(e), at));
      } else if (is_op("(")) {
        NURL_ASSIGN(e, parse_call(std::move(e)));
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> parse_subscript(ExprPtr obj, const Token& at) {
    ExprPtr parts[3];
    bool is_slice = false;
    if (!is_op(":")) {
      NURL_ASSIGN(parts[0], parse_expression(true));
      if (!is_op(":")) {
        NURL_TRY(expect_op("]"));
        auto it = make(ExprKind::item, at);
        at_operand(*it, *obj);
        it->args.push_back(std::move(obj));
        it->args.push_back(std::move(parts[0]));
        return it;
      }
    }
    is_slice = true;
    next();  // ':'
    if (!is_op("]") && !is_op(":")) {
      NURL_ASSIGN(parts[1], parse_expression(true));
    }
    if (skip_op(":"))
      if (!is_op("]")) {
        NURL_ASSIGN(parts[2], parse_expression(true));
      }
    NURL_TRY(expect_op("]"));
    auto s = make(ExprKind::slice, at);
    (void)is_slice;
    at_operand(*s, *obj);
    s->args.push_back(std::move(obj));
    for (auto& p : parts) s->args.push_back(std::move(p));
    return s;
  }

  // `(` args `)` where args are positional then keyword (name=value).
  Result<void> parse_call_args(Expr& e) {
    NURL_TRY(expect_op("("));
    bool first = true;
    while (!is_op(")")) {
      if (!first) NURL_TRY(expect_op(","));
      first = false;
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) return fail(cur(), "*args and **kwargs in calls are not supported");
      if (cur().type == Tok::name && peek().type == Tok::op && peek().value == "=") {
        std::string key = cur().value;
        next();
        next();
        NURL_ASSIGN(ExprPtr v, parse_expression(true));
        e.kwargs.emplace_back(std::move(key), std::move(v));
      } else {
        if (!e.kwargs.empty()) return fail(cur(), "positional argument after keyword argument");
        NURL_ASSIGN(ExprPtr v, parse_expression(true));
        e.args.push_back(std::move(v));
      }
    }
    next();
    return ok();
  }

  Result<ExprPtr> parse_call(ExprPtr callee) {
    auto c = make(ExprKind::call, cur());
    at_operand(*c, *callee);
    c->args.push_back(std::move(callee));
    NURL_TRY(parse_call_args(*c));
    return c;
  }

  // After '|': name(.name)* [call args]. `input` may be null (filter blocks).
  Result<ExprPtr> parse_filter(ExprPtr input) {
    const Token at = cur();
    auto f = make(ExprKind::filter, at);
    NURL_ASSIGN(f->name, expect_name());
    while (is_op(".")) {
      next();
      NURL_ASSIGN(std::string more, expect_name());
      f->name += "." + more;
    }
    f->args.push_back(std::move(input));
    if (is_op("(")) NURL_TRY(parse_call_args(*f));
    return f;
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr e) {
    for (int n = 1;; ++n) {
      NURL_TRY(check_chain(n));
      if (skip_op("|")) {
        NURL_ASSIGN(e, parse_filter(std::move(e)));
      } else if (is_name("is")) {
        NURL_ASSIGN(e, parse_test(std::move(e)));
      } else if (is_op("(")) {
        NURL_ASSIGN(e, parse_call(std::move(e)));
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> parse_test(ExprPtr input) {
    const Token at = cur();
    next();  // 'is'
    auto t = make(ExprKind::test, at);
    if (skip_name("not")) t->negated = true;
    NURL_ASSIGN(t->name, expect_name());
    while (is_op(".")) {
      next();
      NURL_ASSIGN(std::string more, expect_name());
      t->name += "." + more;
    }
    t->args.push_back(std::move(input));
    if (is_op("(")) {
      NURL_TRY(parse_call_args(*t));
    } else if ((cur().type == Tok::name || cur().type == Tok::string || cur().type == Tok::integer ||
                cur().type == Tok::floating || is_op("(") || is_op("[") || is_op("{")) &&
               !is_name("else") && !is_name("or") && !is_name("and")) {
      if (is_name("is")) return fail(cur(), "you cannot chain multiple tests with is");
      // One bare argument: `is divisibleby 3`, `is sameas none`.
      NURL_ASSIGN(ExprPtr arg, parse_primary());
      NURL_ASSIGN(arg, parse_postfix(std::move(arg)));
      t->args.push_back(std::move(arg));
    }
    return t;
  }
};

}  // namespace

Result<Body> parse(std::string_view source) {
  NURL_ASSIGN(std::vector<Token> toks, lex(source));
  return Parser(std::move(toks)).parse_template();
}

}  // namespace nurl::jinja
