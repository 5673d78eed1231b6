// The start-up sweep of CSI mounts their record lacks (persistence/recovery/node_sweep):
// the choice as a plain function. On a real host it runs in e2e.crash_trials, which
// found it: a berthd killed between a NodePublish's bind mount and its commit.

#include "persistence/recovery/node_sweep.hpp"

#include <gtest/gtest.h>

using namespace berth;

namespace {

volume_record staged(const std::string& name, const std::string& device,
                     std::vector<std::string> targets = {}) {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.owner = record_owner::csi;
  rec.staging_path = "/k/staging/" + name;
  rec.device = device;
  for (auto& t : targets) {
    rec.published[t] = publication{};
  }
  return rec;
}

volume_record unstaged(const std::string& name) {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.owner = record_owner::csi;
  return rec;
}

mount_entry mount_of(const std::string& source, const std::string& point) {
  mount_entry m;
  m.source = source;
  m.mount_point = point;
  m.root = "/";
  m.fstype = "xfs";
  return m;
}

std::string image_of(const volume_record& rec) {
  return "/s/block/volumes/" + rec.name + ".img";
}

std::vector<std::string> chosen(const std::vector<stray_node_mount>& strays) {
  std::vector<std::string> out;
  for (const auto& s : strays) {
    out.push_back(s.volume + (s.publication ? " publication " : " staging ") + s.mount_point);
  }
  return out;
}

} // namespace

TEST(node_sweep, a_publication_the_record_lacks_is_chosen_and_nothing_it_holds) {
  state_snapshot state;
  state.volumes["v1"] = staged("v1", "/dev/loop1", {"/k/pods/a/v1"});
  std::vector<mount_entry> mounts{
    mount_of("/dev/loop1", "/k/staging/v1"), // its staging
    mount_of("/dev/loop1", "/k/pods/a/v1"),  // its recorded publication
    mount_of("/dev/loop1", "/k/pods/b/v1"),  // a bind whose commit a crash prevented
  };
  loop_list loops{{"/dev/loop1", "/s/block/volumes/v1.img"}};
  EXPECT_EQ(chosen(node_mounts_to_sweep(state, mounts, loops, image_of, "/k")),
            std::vector<std::string>{"v1 publication /k/pods/b/v1"});
}

TEST(node_sweep, a_staging_the_record_lacks_goes_after_the_publications) {
  state_snapshot state;
  state.volumes["v1"] = staged("v1", "/dev/loop1");
  state.volumes["v2"] = unstaged("v2"); // a crash between its stage's mount and commit
  std::vector<mount_entry> mounts{
    mount_of("/dev/loop2", "/k/staging/v2"),
    mount_of("/dev/loop1", "/k/staging/v1"),
    mount_of("/dev/loop1", "/k/pods/a/v1"),
  };
  // v2's device is known only by its image: its record never got one.
  loop_list loops{{"/dev/loop1", "/s/block/volumes/v1.img"},
                  {"/dev/loop2", "/s/block/volumes/v2.img"}};
  EXPECT_EQ(chosen(node_mounts_to_sweep(state, mounts, loops, image_of, "/k")),
            (std::vector<std::string>{"v1 publication /k/pods/a/v1", "v2 staging /k/staging/v2"}));
}

TEST(node_sweep, mounts_not_of_a_records_device_or_outside_the_kubelet_dir_are_left_alone) {
  state_snapshot state;
  state.volumes["v1"] = staged("v1", "/dev/loop1");
  std::vector<mount_entry> mounts{
    mount_of("/dev/loop1", "/k/staging/v1"),
    mount_of("/dev/loop1", "/elsewhere/v1"),     // outside the kubelet dir
    mount_of("/dev/loop7", "/k/pods/a/other"),   // a loop device of another image
    mount_of("/dev/sda1", "/k/pods/a/v1"),       // not a loop device at all
    mount_of("/dev/loop1", "/k"),                // the kubelet dir itself
  };
  loop_list loops{{"/dev/loop1", "/s/block/volumes/v1.img"},
                  {"/dev/loop7", "/home/someone/disk.img"}};
  EXPECT_TRUE(node_mounts_to_sweep(state, mounts, loops, image_of, "/k").empty());
}

TEST(node_sweep, a_point_mounted_twice_is_chosen_once) {
  state_snapshot state;
  state.volumes["v1"] = staged("v1", "/dev/loop1");
  std::vector<mount_entry> mounts{
    mount_of("/dev/loop1", "/k/staging/v1"),
    mount_of("/dev/loop1", "/k/pods/a/v1"),
    mount_of("/dev/loop1", "/k/pods/a/v1"),
  };
  loop_list loops{{"/dev/loop1", "/s/block/volumes/v1.img"}};
  EXPECT_EQ(chosen(node_mounts_to_sweep(state, mounts, loops, image_of, "/k")),
            std::vector<std::string>{"v1 publication /k/pods/a/v1"});
}

TEST(node_sweep, a_record_of_another_backend_owns_no_loop_device) {
  state_snapshot state;
  auto docker = unstaged("v1");
  docker.backend = "local";
  docker.device = "/dev/loop1"; // never so for a local record; the sweep must not care
  state.volumes["v1"] = docker;
  std::vector<mount_entry> mounts{mount_of("/dev/loop1", "/k/pods/a/v1")};
  loop_list loops{{"/dev/loop1", "/s/block/volumes/v1.img"}};
  EXPECT_TRUE(node_mounts_to_sweep(state, mounts, loops, image_of, "/k").empty());
}
