#pragma once

// A struct's fields listed once, as data: its key in JSON, the member, and when the JSON
// writer writes it. A struct that has a table (a `fields_of(const T&)` found by ADL)
// gets its equality, CAF's inspect and its JSON in both directions from it, so a new
// field is one line of the table (core/volume_record.hpp, core/record_json.cpp).

#include <cstdint>
#include <tuple>
#include <utility>

namespace berth {

/// When the JSON writer writes a field.
enum class write_when : uint8_t {
  always,         ///< in every record
  set,            ///< when it differs from T{}: only for a member whose default is T{}, which
                  ///< an absent field reads as
  set_or_full,    ///< when set, and always in the admin API's full shape
  staged,         ///< while the record is staged: how it is staged exists only then
  staged_and_set, ///< while staged, and only when set
};

/// One field of `Owner`: `key` in JSON, the member, when it is written. `entry` names one
/// element of a map field in errors ("option", "publication"); a `required` field
/// absent from the JSON is a load error.
template <class Owner, class T>
struct field {
  const char* key;
  T Owner::*member;
  write_when when;
  const char* entry;
  bool required;
};

template <class Owner, class T>
constexpr field<Owner, T> make_field(const char* key, T Owner::*member,
                                     write_when when = write_when::always,
                                     const char* entry = nullptr, bool required = false) {
  return {key, member, when, entry, required};
}

/// Calls `f(x.*member...)` with every field of `x`, in the table's order.
template <class T, class F>
decltype(auto) apply_fields(T& x, F&& f) {
  return std::apply([&](const auto&... fd) -> decltype(auto) { return f((x.*fd.member)...); },
                    fields_of(x));
}

/// Calls `f(field, x.*member)` for each field of `x`, in the table's order.
template <class T, class F>
void visit_fields(T& x, F&& f) {
  std::apply([&](const auto&... fd) { (f(fd, x.*fd.member), ...); }, fields_of(x));
}

/// Field by field equality of two structs with a table.
template <class T>
bool fields_equal(const T& a, const T& b) {
  return std::apply([&](const auto&... fd) { return ((a.*fd.member == b.*fd.member) && ...); },
                    fields_of(a));
}

} // namespace berth
