#pragma once

// One grammar for a size, wherever an operator writes one: `berthctl resize NAME 10G`
// and `docker volume create -o size=10G`. Each caller words its own message.

#include <cstdint>
#include <string_view>

namespace berth {

enum class size_problem : uint8_t {
  none,       ///< parsed
  not_a_size, ///< not digits with an optional K, M, G or T (Ki, Mi, Gi, Ti)
  zero,       ///< a size of 0 bytes
  too_large,  ///< beyond 2^64-1 bytes
};

struct parsed_size {
  uint64_t bytes = 0;
  size_problem problem = size_problem::none;
};

/// Bytes, or a number with K, M, G or T (also Ki, Mi, Gi, Ti), each a power of 1024.
/// Nothing else: no spaces, signs, fractions, lowercase units or a trailing B.
parsed_size parse_byte_size(std::string_view text);

/// "give bytes, or a number with K, M, G or T (Ki, Mi, Gi, Ti: powers of 1024), e.g. 10G"
extern const char* const byte_size_grammar;

} // namespace berth
