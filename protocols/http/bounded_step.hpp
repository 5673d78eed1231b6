#pragma once

// One asynchronous operation of a blocking client call, bounded by the call's deadline:
// the one loop behind the Kubernetes and Docker Engine clients' `session::step`.

#include <chrono>
#include <optional>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

namespace berth {

/// Runs the operation `start(handler)` begins on `io` until it completes or `until` passes,
/// and returns its error code. Past `until`, `abort()` closes (or cancels) what it waits on,
/// the aborted operation is run to its completion so nothing is left pending on `io`, and
/// the result is asio::error::timed_out.
template <class Start, class Abort>
boost::system::error_code run_bounded(boost::asio::io_context& io,
                                      std::chrono::steady_clock::time_point until, Start start,
                                      Abort abort) {
  std::optional<boost::system::error_code> result;
  start([&result](boost::system::error_code err, auto&&...) { result = err; });
  io.restart();
  while (!result) {
    if (io.run_one_until(until) == 0) {
      break;
    }
  }
  if (result) {
    return *result;
  }
  abort();
  io.restart();
  io.run();
  return boost::asio::error::timed_out;
}

} // namespace berth
