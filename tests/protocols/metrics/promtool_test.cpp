// Prometheus's own parser and linter on the writer's output: `promtool check metrics`
// (Debian's `prometheus` package; scripts/install-deps.sh --test installs it).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/telemetry/atomic_metrics.hpp"
#include "protocols/metrics/collect.hpp"
#include "protocols/metrics/exposition.hpp"

using namespace berth::metrics;

namespace {

struct check_result {
  int status = -1;
  std::string output;
};

/// Runs `promtool check metrics` on `page`.
check_result promtool_check(const std::string& page) {
  char path[] = "/tmp/berth-metrics-XXXXXX";
  int fd = ::mkstemp(path);
  if (fd < 0) {
    return {-1, "mkstemp failed"};
  }
  auto written = ::write(fd, page.data(), page.size());
  ::close(fd);
  if (written != static_cast<ssize_t>(page.size())) {
    ::unlink(path);
    return {-1, "could not write " + std::string{path}};
  }
  check_result res;
  auto cmd = "promtool check metrics < " + std::string{path} + " 2>&1";
  if (auto* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (auto n = std::fread(buf, 1, sizeof buf, p)) {
      res.output.append(buf, n);
    }
    int rc = ::pclose(p);
    res.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  ::unlink(path);
  return res;
}

bool have_promtool() {
  return std::system("command -v promtool >/dev/null 2>&1") == 0;
}

/// A page with every kind of line the writer makes, names as berth will choose them.
std::string sample_page() {
  atomic_histogram fsync{{0.0005, 0.001, 0.005, 0.01, 0.1}};
  for (double v : {0.0002, 0.0007, 0.0007, 0.003, 0.2}) {
    fsync.observe(v);
  }
  std::vector<family> families{
    {"berth_operations_total",
     "Requests answered, by protocol, operation and result code.\nA second line \\ here.",
     metric_type::counter,
     {{{{"protocol", "docker"}, {"operation", "mount"}, {"code", "ok"}}, 12},
      {{{"protocol", "csi"}, {"operation", "NodePublishVolume"}, {"code", "aborted"}}, 1},
      {{{"protocol", "admin"}, {"operation", "path \"quoted\"\\back\nnewline"}, {"code", "ok"}},
       3}},
     {}},
    {"berth_volumes", "Volumes by backend, kind and state.", metric_type::gauge,
     {{{{"backend", "local"}, {"kind", "volume"}, {"state", "mounted"}}, 4},
      {{{"backend", "block"}, {"kind", "snapshot"}, {"state", "uncertain"}}, 0}},
     {}},
    {"berth_journal_fsync_duration_seconds", "How long one fsync of the journal took.",
     metric_type::histogram, {}, {{{}, fsync.snapshot()}}},
    {"berth_operation_duration_seconds", "How long an operation took.", metric_type::histogram,
     {},
     {{{{"protocol", "docker"}, {"operation", "mount"}}, {{0.01, 0.1}, {2, 3}, 0.125, 4}},
      {{{"protocol", "csi"}, {"operation", "CreateVolume"}}, {{0.01, 0.1}, {0, 0}, 0, 0}}}},
    {"process_resident_memory_bytes", "Resident memory size in bytes.", metric_type::gauge,
     {{{}, 12345678}}, {}},
    {"berth_build_info", "A 1 labelled with the version.", metric_type::gauge,
     {{{{"version", "0.1.0"}, {"revision", "c16d084"}}, 1}}, {}},
    {"process_start_time_seconds", "Start time since the epoch in seconds.", metric_type::gauge,
     {{{}, 1764590000.25}}, {}},
    {"berth_temperature_ratio", "Odd values.", metric_type::gauge,
     {{{{"which", "inf"}}, std::numeric_limits<double>::infinity()},
      {{{"which", "minus_inf"}}, -std::numeric_limits<double>::infinity()},
      {{{"which", "nan"}}, std::numeric_limits<double>::quiet_NaN()},
      {{{"which", "tiny"}}, 1.5e-300}},
     {}},
  };
  auto out = render(families);
  EXPECT_TRUE(out) << berth::describe(out.error());
  return out ? *out : "";
}

} // namespace

TEST(promtool, accepts_a_rendered_page_without_lint_problems) {
  if (!have_promtool()) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus; "
                    "scripts/install-deps.sh --test installs it): not checked by Prometheus";
  }
  auto page = sample_page();
  ASSERT_FALSE(page.empty());
  auto res = promtool_check(page);
  EXPECT_EQ(res.status, 0) << "promtool said:\n" << res.output << "\non this page:\n" << page;
}

TEST(promtool, refuses_a_broken_page_so_the_check_above_can_fail) {
  if (!have_promtool()) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus; "
                    "scripts/install-deps.sh --test installs it): not checked by Prometheus";
  }
  // An unescaped quote in a label value, as a writer without escaping would produce.
  auto res = promtool_check("# HELP x_total X.\n# TYPE x_total counter\n"
                            "x_total{a=\"say \"hi\"\"} 1\n");
  EXPECT_NE(res.status, 0) << res.output;
}

TEST(promtool, accepts_berthds_whole_page) {
  if (!have_promtool()) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus; "
                    "scripts/install-deps.sh --test installs it): not checked by Prometheus";
  }
  berth::telemetry t{{"block", "local"}};
  t.operations.record("docker", "mount", "ok", 0.002);
  t.operations.record("csi", "NodeStageVolume", "not_found", 0.01);
  t.backends.call_duration.at("block", "stage").observe(0.3);
  t.persistence.fsync_duration.observe(0.001);
  auto page = scrape(t);
  ASSERT_TRUE(page) << berth::describe(page.error());
  auto res = promtool_check(*page);
  EXPECT_EQ(res.status, 0) << "promtool said:\n" << res.output << "\non this page:\n" << *page;
}
