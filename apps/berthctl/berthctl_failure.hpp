#pragma once

// What berthctl says when a command fails. Its own failures (no connection, no answer in
// time, a bad command line, an answer it cannot read) have codes of their own beside
// berthd's (core/errors.hpp's ec, read from the answer's status), and report_failure is
// the one place that writes a failure: a line of text, or with --json one JSON object.

#include <cstdint>
#include <iosfwd>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>

namespace berth::cli {

/// berthctl's own failures; a refusal by berthd keeps berthd's ec.
enum class client_ec : uint8_t {
  unreachable = 1, ///< no connection to the admin socket, or it broke before the answer
  no_answer,       ///< berthd accepted the call but did not answer within --timeout
  interrupted,     ///< the call was stopped before its answer (top's q)
  usage,           ///< the command line is wrong (exit_usage)
  bad_answer,      ///< berthd answered something berthctl cannot read
};

/// The short name of a code, e.g. "no_answer".
const char* to_string(client_ec code);

/// Builds an error of berthctl's own with a message.
caf::error make_error(client_ec code, std::string message);

/// A refusal of the command line, naming the argument.
caf::error bad_usage(std::string message);

/// An answer of berthd that berthctl cannot read: client_ec::bad_answer, "berthd sent WHY".
caf::error unreadable_answer(const caf::error& why);

/// The code a failure is reported with: a client_ec's name, else berth's ec's name
/// (core/errors.hpp), else "internal".
std::string failure_code(const caf::error& err);

/// Writes `err` to `out`: "berthctl: MESSAGE\n", or with `json` the one line
/// {"error":{"code":CODE,"message":MESSAGE}}.
void report_failure(std::ostream& out, const caf::error& err, bool json);

/// What berthctl says when it cannot connect to berthd's admin socket `socket`:
/// `connect_errno` tells whether berthd is not running (ENOENT, ENOTDIR: no socket;
/// ECONNREFUSED: a socket nobody accepts on) or the socket is not permitted (EACCES,
/// EPERM), and the message says what to do; any other errno (0: the connection failed
/// after connecting) gives `detail`, the client's error.
std::string unreachable_message(const std::string& socket, int connect_errno,
                                const std::string& detail);

} // namespace berth::cli

CAF_ERROR_CODE_ENUM(berth::cli::client_ec, "berthctl")
