#include "apps/berthctl/berthctl_failure.hpp"

#include <cerrno>
#include <ostream>

#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace berth::cli {

const char* to_string(client_ec code) {
  switch (code) {
    case client_ec::unreachable: return "unreachable";
    case client_ec::no_answer: return "no_answer";
    case client_ec::interrupted: return "interrupted";
    case client_ec::usage: return "usage";
    case client_ec::bad_answer: return "bad_answer";
  }
  return "internal";
}

caf::error make_error(client_ec code, std::string message) {
  return caf::make_error(code, std::move(message));
}

caf::error bad_usage(std::string message) {
  return make_error(client_ec::usage, std::move(message));
}

caf::error unreadable_answer(const caf::error& why) {
  return make_error(client_ec::bad_answer, "berthd sent " + describe(why));
}

std::string failure_code(const caf::error& err) {
  if (err && err.category() == caf::atom("berthctl")) {
    return to_string(static_cast<client_ec>(err.code()));
  }
  if (auto code = berth_code(err)) {
    return to_string(*code);
  }
  return to_string(ec::internal);
}

void report_failure(std::ostream& out, const caf::error& err, bool json) {
  if (json) {
    out << R"({"error":{"code":)" << json_quote(failure_code(err))
        << R"(,"message":)" << json_quote(describe(err)) << "}}\n";
  } else {
    out << "berthctl: " << describe(err) << "\n";
  }
}

std::string unreachable_message(const std::string& socket, int connect_errno,
                                const std::string& detail) {
  switch (connect_errno) {
    case ENOENT:
    case ENOTDIR:
      return "berthd is not running: there is no socket at " + socket
             + ". Start it (systemctl start berthd), or give the socket it listens on "
               "(berthd --admin-socket) with --socket PATH.";
    case ECONNREFUSED:
      return "berthd is not running: nothing accepts connections on " + socket
             + " (the socket of a berthd that stopped?). Start it (systemctl start berthd), "
               "or give the socket it listens on (berthd --admin-socket) with --socket PATH.";
    case EACCES:
    case EPERM:
      return "permission denied on " + socket
             + ": berthd's admin socket is for root and its group (mode 0660). Run berthctl "
               "as root (sudo berthctl ...), or give a socket you may use with --socket PATH.";
    default: return "cannot reach berthd at " + detail;
  }
}

} // namespace berth::cli
