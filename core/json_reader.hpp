// Strict reading of JSON input files.
//
// Every input file (scenario, model, cluster, measurements, calibration) is read through a JsonObject, which knows
// the file and the JSON path of the object it wraps. Each accessor marks its key as used; finish() rejects the
// keys nobody asked for, so a typo is an error and not a silently ignored field. Every error is an InputError
// naming the file, the JSON path (RFC 6901 style: /scheme/servers) and what was expected.
//
//   JsonObject obj = JsonObject::root(load_json_file(path), path);
//   int nodes = obj.get_int("nodes", 1, /*min=*/1);
//   double bw = obj.get_quantity("bandwidth", Quantity::kBandwidthBytesPerSec);
//   obj.finish();   // throws on unknown keys
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace scaletwin {

using Json = nlohmann::json;

// The deepest nesting of arrays and objects any input may have. Shipped files nest 6 deep; readers copy and walk
// documents recursively, so a file nested 10^5 deep would overflow the stack: it is refused while parsing.
inline constexpr int kMaxJsonDepth = 100;

// Reads and parses a JSON file (a regular file of at most kMaxInputFileBytes: core/files.hpp); a missing file or a
// syntax error is an InputError naming the file (and the line), a key given twice in one object or nesting deeper
// than kMaxJsonDepth one naming the file and the JSON path.
Json load_json_file(const std::string& path);
// Parses text that came from `origin` (a file name, for messages), with the same checks.
Json parse_json_text(const std::string& text, const std::string& origin);

class JsonObject {
 public:
  // Wraps `value`, which must be an object, else InputError(file, path, "an object").
  JsonObject(const Json& value, std::string file, std::string path);
  static JsonObject root(const Json& value, const std::string& file) { return JsonObject(value, file, ""); }

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const { return path_ + "/" + key; }
  const Json& raw() const { return *value_; }

  bool has(const std::string& key) const;
  // Marks a key as known without reading it (documentation fields such as "comment", "source").
  void ignore(const std::string& key) const;

  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // One of `choices`, else an error listing them.
  std::string get_enum(const std::string& key, const std::vector<std::string>& choices,
                       std::optional<std::string> fallback = std::nullopt) const;
  int64_t get_int(const std::string& key, std::optional<int64_t> fallback = std::nullopt,
                  int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  double get_number(const std::string& key, std::optional<double> fallback = std::nullopt,
                    double min = -1e308, double max = 1e308) const;
  bool get_bool(const std::string& key, std::optional<bool> fallback = std::nullopt) const;
  // A number (SI) or a string with units; must be > 0 unless allow_zero.
  double get_quantity(const std::string& key, Quantity kind, std::optional<double> fallback = std::nullopt,
                      bool allow_zero = false) const;
  JsonObject get_object(const std::string& key) const;
  // The raw value of an array, checked to be an array; elements are read by the caller with element_path().
  const Json& get_array(const std::string& key) const;
  // A key that may hold any JSON value (caller validates); marks it used.
  const Json* get_any(const std::string& key) const;

  // Throws InputError naming the first unknown key, the known key nearest to it and the known ones.
  void finish() const;
  // The same check against a list given up front: for readers whose required fields would otherwise report a
  // misspelt key as missing ("kernal" is an unknown key near "kernel", not "kernel ... missing").
  void expect_keys(const std::vector<std::string>& known) const;
  // The keys nobody asked for yet, for readers that keep unknown fields (a measured run's) and say so.
  std::vector<std::string> unknown_keys() const;

  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  const Json& require(const std::string& key) const;
  const Json* value_;
  std::string file_;
  std::string path_;
  mutable std::set<std::string> used_;
};

// A quantity held by `v` (a number, SI, or a string with units: units.hpp), for array elements and other values
// that JsonObject::get_quantity does not reach; must be > 0 unless allow_zero. InputError(file, path) otherwise.
double quantity_value(const Json& v, Quantity kind, const std::string& file, const std::string& path,
                      bool allow_zero = false);

// Two field values as a table gives them: as numbers where both are numbers ("2" before "16"), else as text;
// -1, 0 or 1.
int compare_numbers_or_text(const std::string& a, const std::string& b);

// A name as a published table may spell it, reduced for comparison: lower case, without '-', '_', '.' and spaces
// ("ResNet-152" and "resnet152" are both "resnet152").
std::string bare_spelling(const std::string& name);
std::string lower_case(const std::string& text);  // ASCII letters lowered, the rest as it is

// The entry of `candidates` nearest to `word` by edit distance (ties: the first), "" when there is none within
// half the word's length (so that "kernal" finds "kernel" and "zzz" finds nothing).
std::string nearest_word(const std::string& word, const std::vector<std::string>& candidates);

// Describes the JSON type of a value for messages ("a string", "an array", ...).
std::string json_type_name(const Json& v);

}  // namespace scaletwin
