// The committed record of a volume (actors/machine/committed_record.hpp): only commit()
// and forget() change it, and the volume gauges and the record directory follow every
// change.

#include "actors/machine/committed_record.hpp"

#include <gtest/gtest.h>

#include "tests/actors/machine_records.hpp"

using namespace berth;
using test::counted_volumes;
using test::named;
using test::shared_named;

TEST(committed_record, a_new_volume_is_counted_once_its_creation_is_committed) {
  volume_gauges g{{"local"}};
  committed_record rec{shared_named("v1"), false, g};
  EXPECT_FALSE(rec.exists());
  EXPECT_EQ(counted_volumes(g), 0);
  auto next = named("v1");
  next.mounts["c89a"] = 1;
  rec.commit(next, true);
  EXPECT_TRUE(rec.exists());
  EXPECT_EQ(rec->mounts.at("c89a"), 1U);
  EXPECT_EQ(counted_volumes(g), 1);
  EXPECT_EQ(g.mount_ids.value(), 1);
  rec.commit(named("v1"));
  EXPECT_EQ(counted_volumes(g), 1) << "a change moves the count, it does not add one";
  EXPECT_EQ(g.mount_ids.value(), 0);
}

TEST(committed_record, a_loaded_volume_is_counted_and_forgetting_it_keeps_only_its_name) {
  volume_gauges g{{"local"}};
  committed_record rec{shared_named("v2"), true, g};
  EXPECT_EQ(counted_volumes(g), 1);
  rec.forget();
  EXPECT_FALSE(rec.exists());
  EXPECT_EQ(rec->name, "v2");
  EXPECT_EQ(rec->owner, record_owner::unset);
  EXPECT_EQ(counted_volumes(g), 0);
  rec.forget();
  EXPECT_EQ(counted_volumes(g), 0) << "forgetting twice counts nothing twice";
}

TEST(committed_record, a_commit_without_creation_does_not_make_a_volume_exist) {
  volume_gauges g{{"local"}};
  committed_record rec{shared_named("v3"), false, g};
  rec.commit(named("v3"));
  EXPECT_FALSE(rec.exists());
  EXPECT_EQ(counted_volumes(g), 0);
}

namespace {

std::vector<std::string> listed(const record_directory& d) {
  std::vector<std::string> names;
  for (const auto& rec : d.all()) {
    names.push_back(rec->name);
  }
  return names;
}

} // namespace

TEST(committed_record, the_directory_lists_what_exists_and_a_list_keeps_the_record_it_read) {
  volume_gauges g{{"local"}};
  record_directory dir;
  committed_record loaded{shared_named("b-loaded"), true, g, &dir};
  committed_record fresh{shared_named("a-fresh"), false, g, &dir};
  fresh.commit(named("a-fresh"));
  EXPECT_EQ(listed(dir), std::vector<std::string>{"b-loaded"})
    << "a name whose creation is not committed is not listed";
  fresh.commit(named("a-fresh"), true);
  EXPECT_EQ(listed(dir), (std::vector<std::string>{"a-fresh", "b-loaded"})) << "sorted by name";

  auto before = dir.all();
  auto next = named("b-loaded");
  next.mounts["c89a"] = 1;
  loaded.commit(next);
  EXPECT_EQ(dir.all()[1]->mounts.at("c89a"), 1U) << "the directory has the committed record";
  EXPECT_TRUE(before[1]->mounts.empty()) << "a list holds the record it read, unchanged";

  loaded.forget();
  EXPECT_EQ(listed(dir), std::vector<std::string>{"a-fresh"});
  EXPECT_EQ(before[1]->name, "b-loaded") << "and still holds it after the erasure";
}

TEST(committed_record, a_loaded_record_is_the_one_the_directory_lists_not_a_copy) {
  volume_gauges g{{"local"}};
  record_directory dir;
  auto loaded = shared_named("v4");
  dir.put(loaded); // as the registry lists it before the volume first runs
  committed_record rec{loaded, true, g, &dir};
  EXPECT_EQ(dir.find("v4"), loaded);
  EXPECT_EQ(&*rec, loaded.get());
}
