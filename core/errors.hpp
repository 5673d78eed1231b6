#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace berth {

/// Error codes of berth. Every error carries a message that names the bad input.
enum class ec : uint8_t {
  invalid_argument = 1, ///< the request is malformed or names something invalid
  not_found,            ///< no such volume
  already_exists,       ///< a volume with that name exists with other options
  in_use,               ///< the volume still has active mounts
  backend_failure,      ///< the storage side effect failed
  persist_failure,      ///< the state could not be made durable
  timeout,              ///< a backend call did not finish in time
  unavailable,          ///< berthd is shutting down or overloaded
  internal,             ///< a bug: an exception or an impossible state
  out_of_range,         ///< a size outside what is allowed (capacity, shrink)
  failed_precondition,  ///< the volume is not in the state the request needs
  unsupported,          ///< the backend or berth does not do this
  aborted,              ///< an earlier call on the volume has not returned (hung): retry later
  resource_exhausted,   ///< a bound of core/limits.hpp is reached (e.g. targets per volume)
};

/// Returns the short name of a code, e.g. "not_found".
const char* to_string(ec code);

/// The code whose to_string is `name`; nullopt for any other text.
std::optional<ec> ec_from_string(const std::string& name);

/// Returns the human message carried by `err` (falls back to the code's name).
std::string describe(const caf::error& err);

/// Builds an error with a message.
caf::error make_error(ec code, std::string message);

/// The code of `err` when it is one of berth's; nullopt for no error, or for an error of
/// another category (CAF's own, whose numbers mean other things).
std::optional<ec> berth_code(const caf::error& err);

/// True when `err` is berth's error `code`.
bool is(const caf::error& err, ec code);

} // namespace berth

CAF_ERROR_CODE_ENUM(berth::ec, "berth")
