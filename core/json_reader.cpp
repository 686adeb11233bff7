// Strict JSON reading with file and path in every error (see json_reader.hpp).
#include "core/json_reader.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <functional>

#include "core/error.hpp"
#include "core/files.hpp"

namespace scaletwin {

namespace {

// Refuses a key given twice in one object (the JSON grammar allows it; the parser would keep the last value and
// the first would be lost without a word), naming its JSON path, and nesting deeper than kMaxJsonDepth. The
// containers open at the parser's position, with the key or the index being read in each.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(const std::string& origin) : origin_(origin) {}

  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start: open(false); break;
      case Json::parse_event_t::array_start: open(true); break;
      case Json::parse_event_t::key: {
        Frame& top = open_.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          throw InputError(origin_, path(), fmt::format("each key once in an object (\"{}\" appears twice)", top.key));
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        open_.pop_back();
        next_element();
        break;
      case Json::parse_event_t::value: next_element(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array = false;
    size_t index = 0;            // array: the element being read
    std::string key;             // object: the key being read
    std::set<std::string> keys;  // object: the keys read so far
  };
  void open(bool array) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth))  // path(): the array or object that would go deeper
      throw InputError(origin_, path(), fmt::format("arrays and objects nested at most {} deep", kMaxJsonDepth));
    open_.emplace_back().array = array;
  }
  void next_element() {
    if (!open_.empty() && open_.back().array) ++open_.back().index;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : open_) p += "/" + (f.array ? std::to_string(f.index) : f.key);
    return p;
  }
  const std::string& origin_;
  std::vector<Frame> open_;
};

// A number between 0 and the smallest normal double (about 2.2e-308) is subnormal: its inverse overflows to inf and
// its square to 0, so it would pass a "> 0" check and come out as "inf s" or a null MAPE.
std::string subnormal_expectation(double value) {
  return fmt::format("a normal number: 0, or of magnitude at least {:.3g} (got {}, which is subnormal and overflows "
                     "when inverted)", std::numeric_limits<double>::min(), value);
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& origin) {
  DuplicateKeyCheck check(origin);
  try {
    return Json::parse(text, std::ref(check), /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the offset of the error; report line and column.
    size_t line = 1, col = 1;
    for (size_t i = 0; i < text.size() && i + 1 < e.byte; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw InputError(origin, "", fmt::format("valid JSON (syntax error at line {}, column {})", line, col));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double ("1e400") is syntactically valid but not representable.
    throw InputError(origin, "", fmt::format("valid JSON with representable numbers ({})", e.what()));
  }
}

Json load_json_file(const std::string& path) { return parse_json_text(read_input_file(path, "JSON file"), path); }

std::string lower_case(const std::string& text) {
  std::string out;
  for (char ch : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

int compare_numbers_or_text(const std::string& a, const std::string& b) {
  char *end_a = nullptr, *end_b = nullptr;
  const double x = std::strtod(a.c_str(), &end_a), y = std::strtod(b.c_str(), &end_b);
  if (!a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0') return x < y ? -1 : x > y ? 1 : 0;
  return a < b ? -1 : a == b ? 0 : 1;
}

std::string bare_spelling(const std::string& name) {
  std::string out;
  for (char ch : name)
    if (ch != '-' && ch != '_' && ch != '.' && ch != ' ') out += ch;
  return lower_case(out);
}

std::string json_type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

JsonObject::JsonObject(const Json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {
  if (!value.is_object())
    throw InputError(file_, path_.empty() ? "/" : path_, fmt::format("an object, got {}", json_type_name(value)));
}

bool JsonObject::has(const std::string& key) const { return value_->contains(key); }

void JsonObject::ignore(const std::string& key) const { used_.insert(key); }

void JsonObject::fail(const std::string& key, const std::string& expected) const {
  throw InputError(file_, path_of(key), expected);
}

const Json& JsonObject::require(const std::string& key) const {
  used_.insert(key);
  auto it = value_->find(key);
  if (it == value_->end()) fail(key, "this required field (it is missing)");
  return *it;
}

std::string JsonObject::get_string(const std::string& key) const {
  const Json& v = require(key);
  if (!v.is_string()) fail(key, fmt::format("a string, got {}", json_type_name(v)));
  return v.get<std::string>();
}

std::string JsonObject::get_string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) {
    used_.insert(key);
    return fallback;
  }
  return get_string(key);
}

std::string JsonObject::get_enum(const std::string& key, const std::vector<std::string>& choices,
                                 std::optional<std::string> fallback) const {
  if (!has(key) && fallback) {
    used_.insert(key);
    return *fallback;
  }
  std::string s = get_string(key);
  for (const auto& c : choices)
    if (c == s) return s;
  const std::string nearest = nearest_word(s, choices);
  fail(key, fmt::format("one of {} (got \"{}\"{})", fmt::join(choices, ", "), s,
                        nearest.empty() ? std::string() : fmt::format("; did you mean \"{}\"?", nearest)));
}

int64_t JsonObject::get_int(const std::string& key, std::optional<int64_t> fallback, int64_t min, int64_t max) const {
  if (!has(key) && fallback) {
    used_.insert(key);
    return *fallback;
  }
  const Json& v = require(key);
  int64_t out = 0;
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) fail(key, "an integer that fits in 64 bits");
    out = static_cast<int64_t>(v.get<uint64_t>());
  } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() && std::fabs(v.get<double>()) < 9e18) {
    out = static_cast<int64_t>(v.get<double>());
  } else {
    fail(key, fmt::format("an integer, got {}", json_type_name(v)));
  }
  if (out < min || out > max) {
    if (max == INT64_MAX)
      fail(key, fmt::format("an integer >= {} (got {})", min, out));
    fail(key, fmt::format("an integer in [{}, {}] (got {})", min, max, out));
  }
  return out;
}

double JsonObject::get_number(const std::string& key, std::optional<double> fallback, double min, double max) const {
  if (!has(key) && fallback) {
    used_.insert(key);
    return *fallback;
  }
  const Json& v = require(key);
  if (!v.is_number()) fail(key, fmt::format("a number, got {}", json_type_name(v)));
  const double out = v.get<double>();
  if (!std::isfinite(out) || out < min || out > max)
    fail(key, fmt::format("a number in [{}, {}] (got {})", min, max, out));
  if (out != 0.0 && !std::isnormal(out)) fail(key, subnormal_expectation(out));
  return out;
}

bool JsonObject::get_bool(const std::string& key, std::optional<bool> fallback) const {
  if (!has(key) && fallback) {
    used_.insert(key);
    return *fallback;
  }
  const Json& v = require(key);
  if (!v.is_boolean()) fail(key, fmt::format("true or false, got {}", json_type_name(v)));
  return v.get<bool>();
}

double quantity_value(const Json& v, Quantity kind, const std::string& file, const std::string& path,
                      bool allow_zero) {
  double out = 0.0;
  if (v.is_number()) {
    out = v.get<double>();
  } else if (v.is_string()) {
    out = parse_quantity(v.get<std::string>(), kind, file, path);
  } else {
    throw InputError(file, path, fmt::format("a {} (a number or a string with units), got {}", quantity_name(kind),
                                             json_type_name(v)));
  }
  if (!std::isfinite(out) || out < 0.0 || (!allow_zero && out == 0.0))
    throw InputError(file, path, fmt::format("a {} {} (got {})", allow_zero ? "non-negative" : "positive",
                                             quantity_name(kind), out));
  if (out != 0.0 && !std::isnormal(out)) throw InputError(file, path, subnormal_expectation(out));
  return out;
}

double JsonObject::get_quantity(const std::string& key, Quantity kind, std::optional<double> fallback,
                                bool allow_zero) const {
  if (!has(key) && fallback) {
    used_.insert(key);
    return *fallback;
  }
  return quantity_value(require(key), kind, file_, path_of(key), allow_zero);
}

JsonObject JsonObject::get_object(const std::string& key) const {
  const Json& v = require(key);
  return JsonObject(v, file_, path_of(key));
}

const Json& JsonObject::get_array(const std::string& key) const {
  const Json& v = require(key);
  if (!v.is_array()) fail(key, fmt::format("an array, got {}", json_type_name(v)));
  return v;
}

const Json* JsonObject::get_any(const std::string& key) const {
  used_.insert(key);
  auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

std::vector<std::string> JsonObject::unknown_keys() const {
  std::vector<std::string> out;
  for (auto it = value_->begin(); it != value_->end(); ++it)
    if (!used_.count(it.key())) out.push_back(it.key());
  return out;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

[[noreturn]] void fail_unknown_key(const std::string& file, const std::string& path, const std::string& key,
                                   const std::vector<std::string>& known) {
  const std::string nearest = nearest_word(key, known);
  const std::string hint = nearest.empty() ? std::string() : fmt::format("; did you mean \"{}\"?", nearest);
  throw InputError(file, path,
                   fmt::format("a known field (unknown key \"{}\"{}; known keys here: {})", key, hint,
                               fmt::join(known, ", ")));
}

}  // namespace

std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = word.size() / 2 + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(lower_case(word), lower_case(c));
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

void JsonObject::finish() const {
  const std::vector<std::string> unknown = unknown_keys();
  if (unknown.empty()) return;
  fail_unknown_key(file_, path_of(unknown.front()), unknown.front(),
                   std::vector<std::string>(used_.begin(), used_.end()));
}

void JsonObject::expect_keys(const std::vector<std::string>& known) const {
  for (auto it = value_->begin(); it != value_->end(); ++it)
    if (std::find(known.begin(), known.end(), it.key()) == known.end())
      fail_unknown_key(file_, path_of(it.key()), it.key(), known);
}

}  // namespace scaletwin
