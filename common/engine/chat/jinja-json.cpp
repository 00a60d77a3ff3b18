// JSON -> jinja::Value, charged to the render's heap; nesting is bounded like every other value.
#include "engine/chat/jinja-json.h"

#include <nlohmann/json.hpp>

namespace nurl::jinja {

namespace {

Result<Value> convert(Interp& in, const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxNesting)
    return Error(Code::invalid_argument, "JSON nested more than " + std::to_string(kMaxNesting) + " levels deep");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::floating(static_cast<double>(u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::floating(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& x : j) {
        NURL_ASSIGN(Value v, convert(in, x, depth + 1));
        items.push_back(std::move(v));
      }
      return in.make_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      NURL_ASSIGN(DictObj * d, in.heap().new_dict());
      for (const auto& [k, x] : j.items()) {
        NURL_ASSIGN(Value v, convert(in, x, depth + 1));
        Value key = Value::string(k);
        NURL_TRY(in.heap().charge(value_cost(key) + value_cost(v)));
        d->set(key, std::move(v));
      }
      return Value::dict(d);
    }
    default: return Value::none();  // binary / discarded: not produced by the JSON parser
  }
}

}  // namespace

Result<Value> from_json(Interp& in, const nlohmann::ordered_json& j) { return convert(in, j, 0); }

}  // namespace nurl::jinja
