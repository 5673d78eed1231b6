#include "apps/berthd/logging.hpp"

#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include "core/json_text.hpp"

namespace berth {

namespace {

/// %j: the message, escaped to sit inside a JSON string.
class json_escaped_message : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    // The JSON string literal without its quotes: the pattern writes them.
    auto quoted = json_quote(std::string_view{msg.payload.data(), msg.payload.size()});
    dest.append(quoted.data() + 1, quoted.data() + quoted.size() - 1);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<json_escaped_message>();
  }
};

} // namespace

void setup_logging(const std::string& format, const std::string& level, const std::string& file) {
  spdlog::sink_ptr sink;
  std::string file_error;
  if (!file.empty()) {
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(file, false);
    } catch (const std::exception& e) {
      file_error = e.what();
    }
  }
  if (!sink) {
    sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  auto logger = std::make_shared<spdlog::logger>("berthd", sink);
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<json_escaped_message>('j').set_pattern(
      R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":"%j"})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  logger->set_level(spdlog::level::from_str(level));
  // A file is the preStop hook's log (in a pod, /proc/1/fd/2: `kubectl logs`), read while
  // the hook waits: each of its few lines goes out at once, not when it returns.
  logger->flush_on(file.empty() || !file_error.empty() ? spdlog::level::warn : spdlog::level::trace);
  spdlog::set_default_logger(logger);
  if (!file_error.empty()) {
    spdlog::warn("cannot log to {}: {}; logging to stderr", file, file_error);
  }
}

} // namespace berth
