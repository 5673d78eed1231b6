#include "core/errors.hpp"

#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace berth {

const char* to_string(ec code) {
  switch (code) {
    case ec::invalid_argument: return "invalid_argument";
    case ec::not_found: return "not_found";
    case ec::already_exists: return "already_exists";
    case ec::in_use: return "in_use";
    case ec::backend_failure: return "backend_failure";
    case ec::persist_failure: return "persist_failure";
    case ec::timeout: return "timeout";
    case ec::unavailable: return "unavailable";
    case ec::internal: return "internal";
    case ec::out_of_range: return "out_of_range";
    case ec::failed_precondition: return "failed_precondition";
    case ec::unsupported: return "unsupported";
    case ec::aborted: return "aborted";
    case ec::resource_exhausted: return "resource_exhausted";
  }
  return "unknown";
}

std::optional<ec> ec_from_string(const std::string& name) {
  for (auto n = static_cast<uint8_t>(ec::invalid_argument);
       n <= static_cast<uint8_t>(ec::resource_exhausted); ++n) {
    if (name == to_string(static_cast<ec>(n))) {
      return static_cast<ec>(n);
    }
  }
  return std::nullopt;
}

std::string describe(const caf::error& err) {
  if (!err) {
    return "";
  }
  const auto& ctx = err.context();
  if (ctx.size() >= 1 && ctx.match_element<std::string>(0)) {
    return ctx.get_as<std::string>(0);
  }
  if (auto code = berth_code(err)) {
    return to_string(*code);
  }
  if (err.category() == caf::atom("system")) {
    return caf::to_string(static_cast<caf::sec>(err.code()));
  }
  return caf::to_string(err);
}

caf::error make_error(ec code, std::string message) {
  return caf::make_error(code, std::move(message));
}

std::optional<ec> berth_code(const caf::error& err) {
  if (!err || err.category() != caf::atom("berth")) {
    return std::nullopt;
  }
  return static_cast<ec>(err.code());
}

bool is(const caf::error& err, ec code) {
  return berth_code(err) == code;
}

} // namespace berth
