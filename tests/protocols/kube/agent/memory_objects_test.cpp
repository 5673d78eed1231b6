// The in-memory API's watch: what ends it must end it whenever it comes, also while the
// watch delivers an event (its lock released) and cannot be waiting for the news.

#include <chrono>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "tests/protocols/kube/agent/memory_objects.hpp"

namespace berth::test {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// Makes one object and watches from before it, running `during` while its ADDED is
/// delivered; the watch's own deadline is 5 s away.
caf::expected<kube::watch_end> watch_one_event(memory_objects& api,
                                               const std::function<void()>& during) {
  auto before = api.list_objects(kube::berth_volumes(), {}, clock_type::now() + 5s);
  EXPECT_TRUE(before);
  EXPECT_TRUE(api.create_object(kube::berth_volumes(), R"({"metadata":{"name":"a"}})",
                                clock_type::now() + 5s));
  return api.watch_objects(
    kube::berth_volumes(), {}, before->resource_version,
    [&](const kube::object_event&) {
      during();
      return true;
    },
    clock_type::now() + 5s);
}

TEST(memory_objects, a_watch_ends_as_gone_when_its_history_expires_while_it_delivers) {
  memory_objects api;
  auto start = clock_type::now();
  auto end = watch_one_event(api, [&] { api.expire_watches(); });
  ASSERT_TRUE(end) << describe(end.error());
  EXPECT_EQ(*end, kube::watch_end::gone) << "the expiry was lost: the watch ran to its deadline";
  EXPECT_LT(clock_type::now() - start, 4s);
}

TEST(memory_objects, a_watch_ends_when_the_calls_are_cancelled_while_it_delivers) {
  memory_objects api;
  auto start = clock_type::now();
  auto end = watch_one_event(api, [&] { api.cancel_calls(); });
  EXPECT_FALSE(end) << "the cancel was lost: the watch ran to its deadline";
  EXPECT_LT(clock_type::now() - start, 4s);
}

} // namespace
} // namespace berth::test
