#include "core/byte_size.hpp"

namespace berth {

const char* const byte_size_grammar
  = "give bytes, or a number with K, M, G or T (Ki, Mi, Gi, Ti: powers of 1024), e.g. 10G";

parsed_size parse_byte_size(std::string_view text) {
  parsed_size out;
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) {
    out.problem = size_problem::not_a_size;
    return out;
  }
  auto suffix = text.substr(digits);
  if (suffix.size() == 2 && suffix[1] == 'i') {
    suffix.remove_suffix(1);
  }
  unsigned shift = 0;
  if (suffix == "K") {
    shift = 10;
  } else if (suffix == "M") {
    shift = 20;
  } else if (suffix == "G") {
    shift = 30;
  } else if (suffix == "T") {
    shift = 40;
  } else if (!suffix.empty()) {
    out.problem = size_problem::not_a_size;
    return out;
  }
  constexpr uint64_t max = UINT64_MAX;
  uint64_t n = 0;
  for (size_t i = 0; i < digits; ++i) {
    auto d = static_cast<uint64_t>(text[i] - '0');
    if (n > (max - d) / 10) {
      out.problem = size_problem::too_large;
      return out;
    }
    n = n * 10 + d;
  }
  if (n > (max >> shift)) {
    out.problem = size_problem::too_large;
  } else if (n == 0) {
    out.problem = size_problem::zero;
  } else {
    out.bytes = n << shift;
  }
  return out;
}

} // namespace berth
