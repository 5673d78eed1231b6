#include "apps/berthctl/berthctl_top.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iterator>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "apps/berthctl/berthctl_failure.hpp"
#include "apps/berthctl/top_view.hpp"
#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::cli {

namespace {

using steady = std::chrono::steady_clock;

volatile std::sig_atomic_t stop_signal = 0;
volatile std::sig_atomic_t resized = 0;

extern "C" void on_stop_signal(int sig) {
  stop_signal = sig;
}

extern "C" void on_resize_signal(int) {
  resized = 1;
}

constexpr int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

caf::expected<operations_sample> take_sample(unix_http_client& client,
                                             const std::string& socket) {
  auto body = admin_request(client, socket, "/v1/operations");
  if (!body) {
    return body.error();
  }
  auto sample = parse_operations(*body);
  if (!sample) {
    return unreadable_answer(sample.error());
  }
  return sample;
}

void write_all(std::string_view s) {
  while (!s.empty()) {
    auto n = ::write(STDOUT_FILENO, s.data(), s.size());
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    s.remove_prefix(static_cast<size_t>(n));
  }
}

/// The terminal as top needs it, for as long as this lives: keys arrive one by one
/// without echo, the alternate screen is shown with the cursor hidden, and the stop
/// signals and SIGWINCH are caught (and blocked outside wait_for()). The destructor puts
/// back the terminal's settings, the screen, the cursor, the handlers and the mask.
class terminal_mode {
public:
  terminal_mode() {
    if (::tcgetattr(STDIN_FILENO, &saved_) != 0) {
      error_ = std::string{"cannot read the terminal's settings: "} + std::strerror(errno);
      return;
    }
    struct termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    if (::tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) != 0) {
      error_ = std::string{"cannot set the terminal's mode: "} + std::strerror(errno);
      return;
    }
    termios_set_ = true;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(stop_signals); ++i) {
      ::sigaction(stop_signals[i], &sa, &saved_actions_[i]);
    }
    sa.sa_handler = on_resize_signal;
    ::sigaction(SIGWINCH, &sa, &saved_winch_);
    sigset_t block;
    sigemptyset(&block);
    for (int sig : stop_signals) {
      sigaddset(&block, sig);
    }
    sigaddset(&block, SIGWINCH);
    ::sigprocmask(SIG_BLOCK, &block, &wait_mask_);
    for (int sig : stop_signals) {
      sigdelset(&wait_mask_, sig);
    }
    sigdelset(&wait_mask_, SIGWINCH);
    write_all("\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
  }

  ~terminal_mode() {
    if (!termios_set_) {
      return;
    }
    write_all("\x1b[?25h\x1b[?1049l");
    ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
    for (size_t i = 0; i < std::size(stop_signals); ++i) {
      ::sigaction(stop_signals[i], &saved_actions_[i], nullptr);
    }
    ::sigaction(SIGWINCH, &saved_winch_, nullptr);
    sigset_t unblock;
    sigemptyset(&unblock);
    for (int sig : stop_signals) {
      sigaddset(&unblock, sig);
    }
    sigaddset(&unblock, SIGWINCH);
    ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  }

  terminal_mode(const terminal_mode&) = delete;
  terminal_mode& operator=(const terminal_mode&) = delete;

  /// Why the terminal could not be set up ("" when it was).
  const std::string& error() const {
    return error_;
  }

  enum class event { tick, quit, resize };

  /// Waits for `q` (quit), a stop signal (quit), SIGWINCH (resize) or `deadline` (tick).
  /// Other keys are read and ignored; the end of the input quits.
  event wait_for(steady::time_point deadline) {
    while (true) {
      if (stop_signal != 0) {
        return event::quit;
      }
      if (resized != 0) {
        resized = 0;
        return event::resize;
      }
      // Past the deadline the keys already typed are still read (a zero wait): q
      // quits even while a request is in flight (berthctl asks between its waits).
      auto left = std::max(deadline - steady::now(), steady::duration::zero());
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      struct timespec ts {};
      ts.tv_sec = static_cast<time_t>(ns / 1000000000);
      ts.tv_nsec = static_cast<long>(ns % 1000000000);
      struct pollfd p {};
      p.fd = STDIN_FILENO;
      p.events = POLLIN;
      // The signals are blocked except inside ppoll: none arrives between the check
      // above and the wait.
      int r = ::ppoll(&p, 1, &ts, &wait_mask_);
      if (r < 0) {
        if (errno == EINTR) {
          continue;
        }
        return event::quit;
      }
      if (r == 0) {
        return event::tick;
      }
      char c = 0;
      auto n = ::read(STDIN_FILENO, &c, 1);
      if (n == 0) {
        return event::quit;
      }
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) {
          continue;
        }
        return event::quit;
      }
      if (c == 'q' || c == 'Q') {
        return event::quit;
      }
    }
  }

private:
  struct termios saved_ {};
  bool termios_set_ = false;
  std::string error_;
  struct sigaction saved_actions_[std::size(stop_signals)] {};
  struct sigaction saved_winch_ {};
  sigset_t wait_mask_{};
};

/// Columns and rows of the terminal (80x24 when it does not say).
std::pair<size_t, size_t> terminal_size() {
  struct winsize ws {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    return {ws.ws_col, ws.ws_row};
  }
  return {80, 24};
}

std::string seconds_text(std::chrono::milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

std::string clock_text() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
  return buf;
}

/// The summary line under the title: every operation's rate added up.
std::string totals(const top_view& view) {
  double rate = 0;
  double errors = 0;
  for (const auto& r : view.rows) {
    rate += r.rate;
    errors += r.error_rate;
  }
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.1f operations/s, %.1f errors/s over the last %.1f s", rate,
                errors, view.interval_seconds);
  return buf;
}

/// Draws `text` (lines ending in "\n") from the top left, clearing what it does not cover.
void draw(const std::string& text) {
  std::string screen = "\x1b[H";
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    screen.append(text, start, end - start);
    screen += "\x1b[K\n";
    start = end + 1;
  }
  screen += "\x1b[J";
  write_all(screen);
}

int interactive(const options& opts, unix_http_client& client, operations_sample first,
                std::ostream& err) {
  stop_signal = 0;
  resized = 0;
  terminal_mode term;
  if (!term.error().empty()) {
    err << "berthctl: top: " << term.error() << "\n";
    return exit_failure;
  }
  auto title = [&opts] {
    return "berthctl top - berthd at " + opts.socket + " - every " + seconds_text(opts.interval)
           + " - " + clock_text() + " - q quits";
  };
  top_view view;
  std::string status = "first sample taken; the view follows in " + seconds_text(opts.interval);
  auto prev = std::move(first);
  auto render = [&] {
    auto [width, height] = terminal_size();
    // One line less than the screen: a newline on the last row would scroll it.
    draw(format_top(view, title(), status, width, height > 1 ? height - 1 : 1));
  };
  render();
  // A request in flight is interrupted by q or a signal; a resize needs nothing more,
  // since the view is drawn at the terminal's size once the request ends.
  bool quit = false;
  client.set_interrupt([&] {
    quit = quit || term.wait_for(steady::now()) == terminal_mode::event::quit;
    return quit;
  });
  auto deadline = steady::now() + opts.interval;
  while (true) {
    switch (term.wait_for(deadline)) {
      case terminal_mode::event::quit:
        // The terminal is restored when `term` goes; a signal exits as it would have.
        return stop_signal != 0 ? 128 + stop_signal : exit_ok;
      case terminal_mode::event::resize: render(); continue;
      case terminal_mode::event::tick: break;
    }
    auto cur = take_sample(client, opts.socket);
    if (quit) {
      return stop_signal != 0 ? 128 + stop_signal : exit_ok;
    }
    if (cur) {
      view = compute_top(prev, *cur);
      status = totals(view);
      prev = std::move(*cur);
    } else {
      status = "berthctl: " + describe(cur.error()) + " (retrying every "
               + seconds_text(opts.interval) + ")";
    }
    render();
    deadline += opts.interval;
    if (deadline < steady::now()) {
      deadline = steady::now() + opts.interval; // a slow answer: do not catch up in a burst
    }
  }
}

} // namespace

int run_top(const options& opts, std::ostream& out, std::ostream& err) {
  if (!opts.json) {
    bool in = ::isatty(STDIN_FILENO) == 1;
    bool outp = ::isatty(STDOUT_FILENO) == 1;
    if (!in || !outp) {
      std::string which = !in && !outp ? "standard input and output are"
                                       : (!in ? "standard input is" : "standard output is");
      err << "berthctl: top needs a terminal, and its " << which
          << " not one. Run it in a terminal, or use `berthctl top --json` for one sample "
             "of the view.\n";
      return exit_failure;
    }
  }
  unix_http_client client{opts.socket};
  client.set_timeout(opts.timeout);
  auto first = take_sample(client, opts.socket);
  if (!first) {
    report_failure(err, first.error(), opts.json);
    return exit_failure;
  }
  if (!opts.json) {
    out.flush();
    return interactive(opts, client, std::move(*first), err);
  }
  std::this_thread::sleep_for(opts.interval);
  auto second = take_sample(client, opts.socket);
  if (!second) {
    report_failure(err, second.error(), opts.json);
    return exit_failure;
  }
  out << top_json(compute_top(*first, *second)) << "\n";
  return exit_ok;
}

} // namespace berth::cli
