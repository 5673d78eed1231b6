// CSI snapshots: CreateSnapshot, ListSnapshots, DeleteSnapshot, and CreateVolume
// from a snapshot or from a volume (clone), checked by the data on the filesystem.

#include <set>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

class SnapshotTest : public csi_fixture {
protected:
  /// Creates a 1 GiB volume, stages and publishes it, writes `file` = `data`.
  ::testing::AssertionResult make_published_with_file(const std::string& name,
                                                      const std::string& data, v1::Volume* vol,
                                                      std::string* target) {
    auto ok = create_volume(name, vol);
    if (!ok) {
      return ok;
    }
    auto staging = staging_path(vol->volume_id());
    *target = target_path(vol->volume_id());
    if (!(ok = stage(vol->volume_id(), staging))) {
      return ok;
    }
    if (!(ok = publish(vol->volume_id(), staging, *target))) {
      return ok;
    }
    if (int err = write_file_sync(*target + "/file", data); err != 0) {
      return ::testing::AssertionFailure() << "write " << *target << "/file: " << strerror(err);
    }
    return ::testing::AssertionSuccess();
  }

  /// Stages and publishes `id`; returns the target.
  ::testing::AssertionResult mount_restored(const std::string& id, std::string* target) {
    auto staging = staging_path(id);
    *target = target_path(id);
    auto ok = stage(id, staging);
    return ok ? publish(id, staging, *target) : ok;
  }

  std::vector<std::string> list_snapshot_ids(const v1::ListSnapshotsRequest& req) {
    v1::ListSnapshotsResponse resp;
    EXPECT_RPC(OK, call(&Ctrl::ListSnapshots, req, resp));
    std::vector<std::string> ids;
    for (auto& e : resp.entries()) {
      ids.push_back(e.snapshot().snapshot_id());
    }
    return ids;
  }
};

// -- CreateSnapshot -------------------------------------------------------------

TEST_F(SnapshotTest, CreateSnapshotTwiceReturnsTheSameSnapshot) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("src", &vol));
  v1::Snapshot first;
  v1::Snapshot second;
  ASSERT_TRUE(create_snapshot("snap", vol.volume_id(), &first));
  ASSERT_TRUE(create_snapshot("snap", vol.volume_id(), &second));
  EXPECT_EQ(first.snapshot_id(), second.snapshot_id());
  EXPECT_EQ(first.source_volume_id(), vol.volume_id());
  EXPECT_TRUE(first.ready_to_use());
  EXPECT_GT(first.size_bytes(), 0);
  EXPECT_TRUE(first.has_creation_time());
  EXPECT_EQ(first.creation_time().seconds(), second.creation_time().seconds());
}

TEST_F(SnapshotTest, CreateSnapshotSameNameOtherSourceIsAlreadyExists) {
  v1::Volume a;
  v1::Volume b;
  ASSERT_TRUE(create_volume("src-a", &a));
  ASSERT_TRUE(create_volume("src-b", &b));
  ASSERT_TRUE(create_snapshot("snap", a.volume_id(), nullptr));
  v1::CreateSnapshotRequest req;
  req.set_name("snap");
  req.set_source_volume_id(b.volume_id());
  v1::CreateSnapshotResponse resp;
  EXPECT_RPC(ALREADY_EXISTS, call(&Ctrl::CreateSnapshot, req, resp));
}

TEST_F(SnapshotTest, CreateSnapshotOfUnknownVolumeIsNotFound) {
  v1::CreateSnapshotRequest req;
  req.set_name("snap");
  req.set_source_volume_id("never-created");
  v1::CreateSnapshotResponse resp;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::CreateSnapshot, req, resp));
}

TEST_F(SnapshotTest, CreateSnapshotWithMissingFieldsIsInvalidArgument) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("src", &vol));
  v1::CreateSnapshotResponse resp;
  v1::CreateSnapshotRequest no_name;
  no_name.set_source_volume_id(vol.volume_id());
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateSnapshot, no_name, resp));
  v1::CreateSnapshotRequest no_source;
  no_source.set_name("snap");
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::CreateSnapshot, no_source, resp));
}

// -- ListSnapshots -----------------------------------------------------------------

TEST_F(SnapshotTest, ListSnapshotsById) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("src", &vol));
  v1::Snapshot a;
  ASSERT_TRUE(create_snapshot("snap-a", vol.volume_id(), &a));
  ASSERT_TRUE(create_snapshot("snap-b", vol.volume_id(), nullptr));
  v1::ListSnapshotsRequest req;
  req.set_snapshot_id(a.snapshot_id());
  EXPECT_EQ(list_snapshot_ids(req), std::vector<std::string>{a.snapshot_id()});
}

TEST_F(SnapshotTest, ListSnapshotsBySource) {
  v1::Volume one;
  v1::Volume two;
  ASSERT_TRUE(create_volume("src-1", &one));
  ASSERT_TRUE(create_volume("src-2", &two));
  v1::Snapshot a;
  v1::Snapshot b;
  v1::Snapshot c;
  ASSERT_TRUE(create_snapshot("snap-a", one.volume_id(), &a));
  ASSERT_TRUE(create_snapshot("snap-b", one.volume_id(), &b));
  ASSERT_TRUE(create_snapshot("snap-c", two.volume_id(), &c));
  v1::ListSnapshotsRequest req;
  req.set_source_volume_id(one.volume_id());
  auto ids = list_snapshot_ids(req);
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()),
            (std::set<std::string>{a.snapshot_id(), b.snapshot_id()}));
  EXPECT_EQ(ids.size(), 2u);
}

TEST_F(SnapshotTest, ListSnapshotsPaginates) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("src", &vol));
  std::set<std::string> created;
  for (int i = 0; i < 3; ++i) {
    v1::Snapshot s;
    ASSERT_TRUE(create_snapshot("snap-" + std::to_string(i), vol.volume_id(), &s));
    created.insert(s.snapshot_id());
  }
  std::multiset<std::string> seen;
  std::vector<int> sizes;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    v1::ListSnapshotsRequest req;
    req.set_max_entries(2);
    req.set_starting_token(token);
    v1::ListSnapshotsResponse resp;
    ASSERT_RPC(OK, call(&Ctrl::ListSnapshots, req, resp));
    sizes.push_back(resp.entries_size());
    for (auto& e : resp.entries()) {
      seen.insert(e.snapshot().snapshot_id());
    }
    token = resp.next_token();
    if (token.empty()) {
      break;
    }
  }
  EXPECT_EQ(sizes, (std::vector<int>{2, 1}));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), created);
  EXPECT_EQ(seen.size(), created.size()) << "a snapshot was listed twice";
  // Snapshots are not volumes.
  v1::ListVolumesResponse volumes;
  ASSERT_RPC(OK, call(&Ctrl::ListVolumes, v1::ListVolumesRequest{}, volumes));
  EXPECT_EQ(volumes.entries_size(), 1) << volumes.ShortDebugString();
}

TEST_F(SnapshotTest, ListSnapshotsOfUnknownIdIsEmpty) {
  v1::ListSnapshotsRequest req;
  req.set_snapshot_id("never-created");
  EXPECT_TRUE(list_snapshot_ids(req).empty());
}

TEST_F(SnapshotTest, ListSnapshotsWithBogusTokenIsAborted) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("src", &vol));
  ASSERT_TRUE(create_snapshot("snap", vol.volume_id(), nullptr));
  v1::ListSnapshotsRequest req;
  req.set_starting_token("no-such-token-\x01");
  v1::ListSnapshotsResponse resp;
  EXPECT_RPC(ABORTED, call(&Ctrl::ListSnapshots, req, resp));
}

// -- DeleteSnapshot ---------------------------------------------------------------

TEST_F(SnapshotTest, DeleteSnapshotTwiceIsOk) {
  v1::Volume vol;
  ASSERT_TRUE(create_volume("src", &vol));
  v1::Snapshot snap;
  ASSERT_TRUE(create_snapshot("snap", vol.volume_id(), &snap));
  v1::DeleteSnapshotRequest req;
  req.set_snapshot_id(snap.snapshot_id());
  v1::DeleteSnapshotResponse resp;
  EXPECT_RPC(OK, call(&Ctrl::DeleteSnapshot, req, resp));
  EXPECT_RPC(OK, call(&Ctrl::DeleteSnapshot, req, resp));
  v1::ListSnapshotsRequest list;
  list.set_snapshot_id(snap.snapshot_id());
  EXPECT_TRUE(list_snapshot_ids(list).empty());
  v1::DeleteSnapshotRequest no_id;
  EXPECT_RPC(INVALID_ARGUMENT, call(&Ctrl::DeleteSnapshot, no_id, resp));
}

// -- restore and clone ---------------------------------------------------------------

TEST_F(SnapshotTest, VolumeFromSnapshotHoldsTheDataOfTheSnapshot) {
  v1::Volume src;
  std::string src_target;
  ASSERT_TRUE(make_published_with_file("src", "before the snapshot", &src, &src_target));
  v1::Snapshot snap;
  ASSERT_TRUE(create_snapshot("snap", src.volume_id(), &snap));
  ASSERT_EQ(write_file_sync(src_target + "/file", "after the snapshot"), 0);
  ASSERT_EQ(write_file_sync(src_target + "/later", "x"), 0);

  auto req = create_request("restored", GiB);
  req.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snap.snapshot_id());
  v1::Volume restored;
  ASSERT_TRUE(create_volume(req, &restored));
  EXPECT_EQ(restored.content_source().snapshot().snapshot_id(), snap.snapshot_id())
    << restored.ShortDebugString();
  // The source stays published: a restored xfs has the source's UUID.
  std::string target;
  ASSERT_TRUE(mount_restored(restored.volume_id(), &target));
  EXPECT_EQ(read_file(target + "/file").value_or("<unreadable>"), "before the snapshot");
  EXPECT_FALSE(read_file(target + "/later").has_value()) << "written after the snapshot";
  EXPECT_EQ(read_file(src_target + "/file").value_or("<unreadable>"), "after the snapshot");
}

TEST_F(SnapshotTest, CloneHoldsTheDataOfItsSource) {
  v1::Volume src;
  std::string src_target;
  ASSERT_TRUE(make_published_with_file("src", "cloned data", &src, &src_target));
  auto req = create_request("clone", GiB);
  req.mutable_volume_content_source()->mutable_volume()->set_volume_id(src.volume_id());
  v1::Volume clone;
  ASSERT_TRUE(create_volume(req, &clone));
  EXPECT_EQ(clone.content_source().volume().volume_id(), src.volume_id())
    << clone.ShortDebugString();
  ASSERT_EQ(write_file_sync(src_target + "/later", "x"), 0);
  std::string target;
  ASSERT_TRUE(mount_restored(clone.volume_id(), &target));
  EXPECT_EQ(read_file(target + "/file").value_or("<unreadable>"), "cloned data");
  EXPECT_FALSE(read_file(target + "/later").has_value()) << "written after the clone";
}

TEST_F(SnapshotTest, VolumeFromUnknownSourceIsNotFound) {
  v1::CreateVolumeResponse resp;
  auto from_snap = create_request("restored", GiB);
  from_snap.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("never-created");
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::CreateVolume, from_snap, resp));
  auto from_vol = create_request("clone", GiB);
  from_vol.mutable_volume_content_source()->mutable_volume()->set_volume_id("never-created");
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::CreateVolume, from_vol, resp));
}

} // namespace
} // namespace berth::csi_test
