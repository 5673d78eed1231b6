// count_turn (actors/machine/count_turn.hpp): which Mounts and Unmounts may share a turn,
// and the record they lead to. Plain records, no actor.

#include "actors/machine/count_turn.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;

namespace {

const release_clock::time_point at{std::chrono::milliseconds(1000)};

volume_record mounted_with(std::map<std::string, uint32_t> mounts) {
  volume_record rec;
  rec.name = "v1";
  rec.owner = record_owner::docker;
  rec.mounted = true;
  rec.mountpoint = "/m/v1";
  rec.mounts = std::move(mounts);
  return rec;
}

count_change mount_of(std::string id) {
  return {std::move(id), std::string{"dockerd-1"}};
}
count_change unmount_of(std::string id) {
  return {std::move(id), std::nullopt};
}

} // namespace

TEST(count_turn, mounts_and_unmounts_of_a_mounted_volume_apply_in_order) {
  count_turn turn{mounted_with({{"a", 1}}), at};
  EXPECT_TRUE(turn.admit(mount_of("b")));
  EXPECT_TRUE(turn.admit(mount_of("a")));
  EXPECT_TRUE(turn.admit(unmount_of("b")));
  EXPECT_TRUE(turn.changed());
  EXPECT_EQ(turn.next().mounts, (std::map<std::string, uint32_t>{{"a", 2}}));
  EXPECT_TRUE(turn.next().mounted);
  ASSERT_EQ(turn.outcomes().size(), 3U);
  EXPECT_EQ(turn.outcomes()[0].line, "volume v1 mount counted (id b, count 1)");
  EXPECT_EQ(turn.outcomes()[1].line, "volume v1 mount counted (id a, count 2)");
  EXPECT_EQ(turn.outcomes()[2].line, "volume v1 unmount counted (id b, 2 mount(s) left)");
}

TEST(count_turn, the_first_mount_and_the_last_unmount_need_the_host_and_change_nothing) {
  auto unmounted = mounted_with({});
  unmounted.mounted = false;
  unmounted.mountpoint.clear();
  count_turn first{unmounted, at};
  EXPECT_FALSE(first.admit(mount_of("a")));
  EXPECT_FALSE(first.changed());
  EXPECT_TRUE(first.outcomes().empty());

  count_turn last{mounted_with({{"a", 1}}), at};
  EXPECT_TRUE(last.admit(mount_of("b")));
  EXPECT_TRUE(last.admit(unmount_of("a")));
  EXPECT_FALSE(last.admit(unmount_of("b"))) << "the last Unmount unmounts the host";
  EXPECT_EQ(last.next().mounts, (std::map<std::string, uint32_t>{{"b", 1}}));
  EXPECT_EQ(last.outcomes().size(), 2U);
}

TEST(count_turn, an_unknown_id_and_a_refused_change_join_without_changing_the_record) {
  auto before = mounted_with({{"a", 1}});
  count_turn turn{before, at};
  EXPECT_TRUE(turn.admit(unmount_of("zz")));
  turn.refuse(make_error(ec::aborted, "the caller went away"));
  EXPECT_FALSE(turn.changed());
  EXPECT_EQ(turn.next(), before);
  ASSERT_EQ(turn.outcomes().size(), 2U);
  EXPECT_FALSE(turn.outcomes()[0].err);
  EXPECT_FALSE(turn.outcomes()[0].changes);
  EXPECT_EQ(turn.outcomes()[0].line, "volume v1: unmount of unknown id zz ignored");
  EXPECT_TRUE(is(turn.outcomes()[1].err, ec::aborted));
}

TEST(count_turn, a_mount_check_mount_refuses_is_answered_with_its_error) {
  auto snapshot = mounted_with({});
  snapshot.kind = record_kind::snapshot;
  count_turn turn{snapshot, at};
  EXPECT_TRUE(turn.admit(mount_of("a")));
  EXPECT_FALSE(turn.changed());
  ASSERT_EQ(turn.outcomes().size(), 1U);
  EXPECT_TRUE(is(turn.outcomes()[0].err, ec::not_found)) << describe(turn.outcomes()[0].err);
}
