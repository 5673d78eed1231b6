#pragma once

// How names, text and numbers are spelled in the Prometheus text format 0.0.4: the
// grammar of metric and label names, the escapes of HELP text and label values, and
// sample values. The writer (exposition.hpp) uses these; they are public so that tests
// and callers can check a name before building a family.

#include <string>
#include <string_view>

namespace berth::metrics {

/// Spells a sample value (or a bucket bound) as Prometheus parses it: an integer
/// without exponent or fraction where it is exact (|v| <= 2^53); otherwise the shortest
/// decimal that reads back as the same double, with an exponent only below 1e-4 or for
/// integers past 2^53 ("0.0005", "1.5e-07", "1e+16"); "+Inf", "-Inf", "NaN".
std::string format_value(double value);

/// True for a metric name: [a-zA-Z_:][a-zA-Z0-9_:]*.
bool is_valid_metric_name(std::string_view name);

/// True for a label name a caller may use: [a-zA-Z_][a-zA-Z0-9_]*, not starting with
/// "__" (reserved for Prometheus's own labels).
bool is_valid_label_name(std::string_view name);

/// Escapes HELP text: backslash and newline.
std::string escape_help(std::string_view text);

/// Escapes a label value: backslash, double quote and newline.
std::string escape_label_value(std::string_view value);

/// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points
/// past U+10FFFF): Prometheus refuses a page that is not.
bool is_utf8(std::string_view s);

} // namespace berth::metrics
