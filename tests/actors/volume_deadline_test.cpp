// The timeout of a volume's backend calls (actors/volume_engine.cpp): what it keeps
// between calls must not grow with the calls made, and each call still times out at
// its own deadline.

#include "actors/volume.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_deadline_test : public test::volume_fixture {
protected:
  std::string mount(const std::string& id) {
    std::string mp;
    self->request(vol, 5s, atom::mount_v, id, std::string{}, caller{})
      .receive([&](std::string& out) { mp = out; },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    return mp;
  }

  /// Strong references to the volume actor: ours, and one per pending delayed message
  /// (CAF 0.17's clock holds its receiver until the message is due; it cannot be
  /// cancelled).
  size_t strong_refs() const {
    return caf::actor_cast<caf::strong_actor_ptr>(vol)->strong_refs.load();
  }
};

} // namespace

TEST_F(volume_deadline_test, calls_well_within_their_timeout_keep_no_timer_per_call) {
  spawn_volume("v1", 30s);
  ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0}));
  auto pairs = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      auto id = "c" + std::to_string(i);
      ASSERT_FALSE(mount(id).empty());
      ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, id));
    }
  };
  auto before = strong_refs();
  pairs(0, 50);
  auto after_100_calls = strong_refs();
  pairs(50, 100);
  auto after_200_calls = strong_refs();
  EXPECT_EQ(storage->mounts, 100);
  // Each call took microseconds. A timer per call held a reference for 30 s, two per call
  // (204 after 100 calls); what is left beside the one timer are references on their way
  // out (an executor job's closure, a reply in flight), a few whatever the calls made.
  constexpr size_t in_flight = 8;
  EXPECT_LE(after_100_calls, before + in_flight);
  EXPECT_LE(after_200_calls, before + in_flight) << "references grow with the calls";
}

TEST_F(volume_deadline_test, a_call_still_times_out_at_its_own_deadline_after_quick_ones) {
  spawn_volume("v1", 300ms);
  ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0}));
  // Quick calls first arm the one timer; the slow call after them must time out
  // 300 ms after it started, not be missed because a timer was already armed.
  ASSERT_FALSE(mount("quick").empty());
  ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"quick"}));
  storage->call_ms = 2000;
  auto t0 = std::chrono::steady_clock::now();
  caf::error err;
  self->request(vol, 5s, atom::mount_v, std::string{"slow"}, std::string{}, caller{})
    .receive([](std::string&) {}, [&](caf::error& e) { err = e; });
  auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(err) << "a mount slower than its timeout succeeded";
  EXPECT_EQ(err.code(), static_cast<uint8_t>(ec::timeout)) << describe(err);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 2000ms) << "the timeout waited for the call instead of its deadline";
  storage->call_ms = 0;
}
