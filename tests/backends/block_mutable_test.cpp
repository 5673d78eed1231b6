// The block backend's modification contract without root: which mutable parameters
// validate_mutable takes, and the cooldown between modifications (an injected clock,
// on images no loop device backs, so no test waits for the interval).

#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "backends/block_backend.hpp"
#include "backends/detail/block_image.hpp"
#include "backends/modify_cooldown.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;
using std::chrono::system_clock;

// -- validate_mutable ----------------------------------------------------------------------

class block_mutable : public ::testing::Test {
protected:
  block_backend backend_{"/nonexistent-state"};

  caf::error check(const option_map& parameters) const {
    return backend_.validate_mutable("v1", parameters);
  }
};

TEST_F(block_mutable, takes_read_ahead_and_direct_io) {
  EXPECT_FALSE(check({}));
  EXPECT_FALSE(check({{"readAheadKB", "0"}}));
  EXPECT_FALSE(check({{"readAheadKB", "128"}}));
  EXPECT_FALSE(check({{"readAheadKB", std::to_string(limits::max_read_ahead_kb)}}));
  EXPECT_FALSE(check({{"directIO", "true"}, {"readAheadKB", "4096"}}));
  EXPECT_FALSE(check({{"directIO", "false"}}));
}

TEST_F(block_mutable, an_unknown_key_is_named_with_the_keys_there_are) {
  auto err = check({{"iops", "3000"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_TRUE(mentions(err, "volume v1")) << describe(err);
  EXPECT_TRUE(mentions(err, "\"iops\"")) << describe(err);
  EXPECT_TRUE(mentions(err, "readAheadKB")) << describe(err);
  EXPECT_TRUE(mentions(err, "directIO")) << describe(err);
  // Keys are case-sensitive, as in a VolumeAttributesClass.
  err = check({{"readaheadkb", "128"}});
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "unknown mutable parameter \"readaheadkb\"")) << describe(err);
}

TEST_F(block_mutable, a_creation_parameter_is_fixed_at_creation) {
  for (const char* key : {"fsType", "backend", "csi.storage.k8s.io/pvc/name"}) {
    auto err = check({{key, "xfs"}});
    ASSERT_TRUE(err) << key;
    EXPECT_EQ(code_of(err), ec::invalid_argument) << key;
    EXPECT_TRUE(mentions(err, std::string("\"") + key + "\"")) << describe(err);
    EXPECT_TRUE(mentions(err, "fixed at creation")) << describe(err);
  }
}

TEST_F(block_mutable, a_bad_value_names_key_value_and_what_is_allowed) {
  struct bad {
    const char* key;
    const char* value;
    const char* allowed;
  };
  for (const auto& b : {bad{"directIO", "yes", "true or false"},
                        bad{"directIO", "", "true or false"},
                        bad{"directIO", "TRUE", "true or false"},
                        bad{"readAheadKB", "-4", "0 to 65536"},
                        bad{"readAheadKB", "12.5", "0 to 65536"},
                        bad{"readAheadKB", "", "0 to 65536"},
                        bad{"readAheadKB", " 128", "0 to 65536"},
                        bad{"readAheadKB", "0128", "0 to 65536"},
                        bad{"readAheadKB", "65540", "0 to 65536"},
                        bad{"readAheadKB", "99999999999999999999", "0 to 65536"},
                        bad{"readAheadKB", "130", "multiple of the page size"}}) {
    auto err = check({{b.key, b.value}});
    ASSERT_TRUE(err) << b.key << "=" << b.value;
    EXPECT_EQ(code_of(err), ec::invalid_argument);
    EXPECT_TRUE(mentions(err, "volume v1")) << describe(err);
    EXPECT_TRUE(mentions(err, std::string(b.key) + "=\"" + b.value + "\"")) << describe(err);
    EXPECT_TRUE(mentions(err, b.allowed)) << describe(err);
  }
}

TEST_F(block_mutable, the_bounds_of_core_limits_hold) {
  option_map many;
  for (size_t i = 0; i <= limits::max_options; ++i) {
    many["k" + std::to_string(i)] = "1";
  }
  auto err = check(many);
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "at most " + std::to_string(limits::max_options))) << describe(err);

  err = check({{std::string(limits::max_option_key_bytes + 1, 'k'), "1"}});
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "at most " + std::to_string(limits::max_option_key_bytes)))
    << describe(err);
  EXPECT_LT(describe(err).size(), 200u) << "the long key is not repeated";

  err = check({{"readAheadKB", std::string(limits::max_option_value_bytes + 1, '4')}});
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "at most " + std::to_string(limits::max_option_value_bytes)))
    << describe(err);

  err = check({{"", "1"}});
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "empty key")) << describe(err);
}

TEST_F(block_mutable, an_invalid_volume_name_is_refused) {
  auto err = backend_.validate_mutable("../v1", {{"directIO", "true"}});
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_TRUE(mentions(err, "../v1")) << describe(err);
}

TEST_F(block_mutable, a_mutable_key_is_no_creation_parameter) {
  auto err = backend_.validate("v1", {{"readAheadKB", "128"}});
  ASSERT_TRUE(err);
  EXPECT_TRUE(mentions(err, "mutable parameter")) << describe(err);
}

// -- the cooldown, with an injected clock -------------------------------------------------

/// A block backend with a cooldown whose clock the test moves.
class block_cooldown : public ::testing::Test {
protected:
  static constexpr std::chrono::milliseconds interval{std::chrono::hours(6)};

  void SetUp() override {
    ASSERT_FALSE(state_.path().empty());
    cooldown_config config;
    config.interval = interval;
    config.clock = [now = now_] { return *now; };
    backend_ = std::make_unique<block_backend>(state_.path(), std::chrono::seconds(5),
                                               block_space{}, default_kubelet_dir, config);
    // 2026-12-01T10:00:00.250Z
    *now_ = system_clock::time_point(std::chrono::seconds(1796119200))
            + std::chrono::milliseconds(250);
    rec_ = make_record("c1", 16 * mib, "ext4");
    ASSERT_FALSE(backend_->create(rec_));
  }

  void advance(std::chrono::milliseconds by) {
    *now_ += by;
  }

  uint64_t image_size() const {
    auto size = block_image_size(backend_->image_path(rec_));
    EXPECT_TRUE(size);
    return size ? *size : 0;
  }

  test::temp_state state_;
  std::shared_ptr<system_clock::time_point> now_ = std::make_shared<system_clock::time_point>();
  std::unique_ptr<block_backend> backend_;
  volume_record rec_;
};

TEST_F(block_cooldown, an_early_modify_is_refused_saying_when_to_retry) {
  ASSERT_FALSE(backend_->modify(rec_, {32 * mib, {{"readAheadKB", "256"}}}));
  rec_.capacity_bytes = 32 * mib;
  rec_.mutable_parameters["readAheadKB"] = "256";
  EXPECT_EQ(image_size(), 32 * mib);

  advance(std::chrono::minutes(90));
  auto err = backend_->modify(rec_, {64 * mib, {{"directIO", "true"}}});
  ASSERT_TRUE(err) << "a second modification within the interval";
  EXPECT_EQ(code_of(err), ec::resource_exhausted);
  EXPECT_TRUE(mentions(err, "volume c1")) << describe(err);
  EXPECT_TRUE(mentions(err, "modified at 2026-12-01T10:00:00Z")) << describe(err);
  // 10:00:00.250 + 6 h, rounded up to the second; 4.5 h = 16200 s from now.
  EXPECT_TRUE(mentions(err, "modified again at 2026-12-01T16:00:01Z")) << describe(err);
  EXPECT_TRUE(mentions(err, "in 16200 s")) << describe(err);
  EXPECT_EQ(image_size(), 32 * mib) << "a refused modify changes nothing";

  advance(std::chrono::hours(4) + std::chrono::minutes(30) - std::chrono::milliseconds(1));
  err = backend_->modify(rec_, {64 * mib, {}});
  ASSERT_TRUE(err) << "1 ms early";
  EXPECT_TRUE(mentions(err, "in 1 s")) << describe(err);

  advance(std::chrono::milliseconds(1));
  ASSERT_FALSE(backend_->modify(rec_, {64 * mib, {{"directIO", "true"}}}));
  EXPECT_EQ(image_size(), 64 * mib);
}

TEST_F(block_cooldown, the_interval_counts_from_the_last_success_only) {
  // A refused modify (a shrink) starts nothing.
  auto err = backend_->modify(rec_, {8 * mib, {}});
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::out_of_range);
  ASSERT_FALSE(backend_->modify(rec_, {32 * mib, {}}));

  // Nor does a refusal by the cooldown itself: the wait still ends 6 h after the success.
  advance(std::chrono::hours(5));
  ASSERT_TRUE(backend_->modify(rec_, {48 * mib, {}}));
  advance(std::chrono::hours(1));
  EXPECT_FALSE(backend_->modify(rec_, {48 * mib, {}}));
}

TEST_F(block_cooldown, a_retry_of_what_was_applied_is_not_refused) {
  ASSERT_FALSE(backend_->modify(rec_, {32 * mib, {{"directIO", "true"}}}));
  advance(std::chrono::minutes(1));
  // The record was not committed (rec_ still has the old size and no parameters):
  // the volume actor retries the same call, which has nothing left to change.
  EXPECT_FALSE(backend_->modify(rec_, {32 * mib, {{"directIO", "true"}}}));
  EXPECT_FALSE(backend_->modify(rec_, {0, {{"directIO", "true"}}}));
  auto err = backend_->modify(rec_, {0, {{"directIO", "false"}}});
  ASSERT_TRUE(err) << "another value is a new modification";
  EXPECT_EQ(code_of(err), ec::resource_exhausted);
  err = backend_->modify(rec_, {33 * mib, {}});
  ASSERT_TRUE(err) << "another size is a new modification";
  EXPECT_EQ(code_of(err), ec::resource_exhausted);
}

TEST_F(block_cooldown, a_bad_parameter_is_refused_before_the_cooldown_and_changes_nothing) {
  auto err = backend_->modify(rec_, {64 * mib, {{"fsType", "xfs"}}});
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::invalid_argument);
  EXPECT_EQ(image_size(), 16 * mib);
  ASSERT_FALSE(backend_->modify(rec_, {64 * mib, {}})) << "the refusal started no interval";
}

TEST_F(block_cooldown, volumes_are_counted_apart_and_a_removed_one_is_forgotten) {
  auto other = make_record("c2", 16 * mib, "ext4");
  ASSERT_FALSE(backend_->create(other));
  ASSERT_FALSE(backend_->modify(rec_, {32 * mib, {}}));
  EXPECT_FALSE(backend_->modify(other, {32 * mib, {}})) << "c2 is not c1";
  EXPECT_TRUE(backend_->modify(other, {48 * mib, {}}));

  ASSERT_FALSE(backend_->remove(other));
  ASSERT_FALSE(backend_->create(other));
  EXPECT_FALSE(backend_->modify(other, {48 * mib, {}})) << "a new volume under the old name";
}

TEST(modify_cooldown, without_an_interval_nothing_is_refused_or_kept) {
  modify_cooldown none;
  none.record("v1", {{"directIO", "true"}});
  EXPECT_FALSE(none.check("v1", "volume v1"));
  EXPECT_TRUE(none.applied("v1").empty());
}

TEST(modify_cooldown, keeps_what_the_modifications_applied) {
  cooldown_config config;
  config.interval = std::chrono::milliseconds(1);
  modify_cooldown c(config);
  c.record("v1", {{"directIO", "true"}, {"readAheadKB", "128"}});
  c.record("v1", {{"readAheadKB", "256"}});
  EXPECT_EQ(c.applied("v1"), (option_map{{"directIO", "true"}, {"readAheadKB", "256"}}));
  c.forget("v1");
  EXPECT_TRUE(c.applied("v1").empty());
}

} // namespace
} // namespace berth
