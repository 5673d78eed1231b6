#include "backends/local_options.hpp"

#include <gtest/gtest.h>
#include <sys/mount.h>

#include "core/errors.hpp"

namespace berth {
namespace {

/// The message of validate_local_options, "" when valid.
std::string check(const option_map& opts) {
  auto err = validate_local_options("v1", opts);
  if (err) {
    EXPECT_EQ(static_cast<ec>(err.code()), ec::invalid_argument);
  }
  return describe(err);
}

bool mentions(const std::string& msg, const std::string& what) {
  return msg.find(what) != std::string::npos;
}

TEST(local_options, no_options_is_a_plain_directory) {
  EXPECT_EQ(check({}), "");
  auto plan = plan_local_mount("v1", {}, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, local_kind::directory);
  EXPECT_EQ(plan->flags, static_cast<unsigned long>(MS_BIND));
}

TEST(local_options, unknown_option_is_named) {
  EXPECT_EQ(check({{"colour", "red"}}),
            "unknown option \"colour\" for volume v1 (allowed: type, device, o, size, uid, gid, mode, "
            "backend, from-snapshot, clone-of)");
}

TEST(local_options, uid_gid_and_mode_of_a_plain_directory_are_planned) {
  auto plan = plan_local_mount("v1", {{"uid", "1000"}, {"gid", "0"}, {"mode", "750"}}, {});
  ASSERT_TRUE(plan) << describe(plan.error());
  EXPECT_EQ(plan->root.uid, std::optional<uint32_t>(1000));
  EXPECT_EQ(plan->root.gid, std::optional<uint32_t>(0));
  EXPECT_EQ(plan->root.mode, std::optional<uint32_t>(0750));
  plan = plan_local_mount("v1", {{"mode", "01777"}, {"uid", "4294967294"}}, {});
  ASSERT_TRUE(plan) << describe(plan.error());
  EXPECT_EQ(plan->root.mode, std::optional<uint32_t>(01777));
  EXPECT_FALSE(plan->root.gid);
  EXPECT_FALSE(plan_local_mount("v1", {}, {})->root.uid);
}

TEST(local_options, a_bad_uid_gid_or_mode_is_named_with_its_value) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
         {"uid", "-1"}, {"uid", "4294967295"}, {"uid", "alice"}, {"gid", "1e3"}, {"gid", " 1"},
         {"mode", "0800"}, {"mode", "75"}, {"mode", "u+rwx"}, {"mode", "017777"}, {"uid", "99999999999"}}) {
    auto msg = check({{key, value}});
    EXPECT_TRUE(mentions(msg, "\"" + key + "\"") && mentions(msg, "\"" + value + "\"")) << key << "=" << value
                                                                                        << ": " << msg;
  }
}

TEST(local_options, uid_gid_and_mode_with_a_type_are_refused_saying_where_they_go) {
  auto msg = check({{"type", "tmpfs"}, {"uid", "1000"}});
  EXPECT_TRUE(mentions(msg, "plain directory") && mentions(msg, "o=uid=")) << msg;
  msg = check({{"type", "bind"}, {"device", "/srv/x"}, {"mode", "0700"}});
  EXPECT_TRUE(mentions(msg, "plain directory") && mentions(msg, "bind")) << msg;
}

TEST(local_options, device_and_o_need_type) {
  auto msg = check({{"device", "/dev/sdb"}});
  EXPECT_TRUE(mentions(msg, "\"device\"") && mentions(msg, "\"type\"")) << msg;
  msg = check({{"o", "ro"}});
  EXPECT_TRUE(mentions(msg, "\"o\"") && mentions(msg, "\"type\"")) << msg;
}

TEST(local_options, type_needs_device_except_tmpfs) {
  for (const char* type : {"bind", "ext4", "xfs", "btrfs", "nfs", "nfs4", "efs"}) {
    auto msg = check({{"type", type}, {"o", "ro"}});
    EXPECT_TRUE(mentions(msg, "\"device\"")) << type << ": " << msg;
  }
  EXPECT_EQ(check({{"type", "tmpfs"}}), "");
  EXPECT_EQ(check({{"type", "tmpfs"}, {"o", "size=1m,mode=1777"}}), "");
  EXPECT_EQ(check({{"type", "tmpfs"}, {"device", "tmpfs"}, {"o", "uid=1000,gid=1000,noexec"}}), "");
}

TEST(local_options, unsupported_type_is_named) {
  auto msg = check({{"type", "cifs"}, {"device", "//srv/share"}});
  EXPECT_TRUE(mentions(msg, "\"cifs\"")) << msg;
}

TEST(local_options, empty_and_control_character_values_are_refused) {
  EXPECT_TRUE(mentions(check({{"type", ""}}), "\"type\""));
  EXPECT_TRUE(mentions(check({{"type", "tmpfs"}, {"o", std::string("size=1m\nmode=1")}}),
                       "control character"));
  EXPECT_TRUE(mentions(check({{"type", "tmpfs"}, {"o", "size=1m,,ro"}}), "empty element"));
}

TEST(local_options, size_only_for_tmpfs) {
  EXPECT_EQ(check({{"type", "tmpfs"}, {"size", "64m"}}), "");
  auto msg = check({{"size", "1G"}});
  EXPECT_TRUE(mentions(msg, "\"size\"") && mentions(msg, "-o backend=block")) << msg;
  EXPECT_EQ(check({{"backend", "local"}}), "");
  msg = check({{"backend", "lvm"}});
  EXPECT_TRUE(mentions(msg, "backend=\"lvm\"") && mentions(msg, "(local)")) << msg;
  msg = check({{"type", "ext4"}, {"device", "/dev/sdb"}, {"size", "1G"}});
  EXPECT_TRUE(mentions(msg, "\"size\"") && mentions(msg, "ext4")) << msg;
  msg = check({{"type", "tmpfs"}, {"size", "lots"}});
  EXPECT_TRUE(mentions(msg, "lots")) << msg;
  msg = check({{"type", "tmpfs"}, {"size", "1m"}, {"o", "size=2m"}});
  EXPECT_TRUE(mentions(msg, "twice")) << msg;
  auto plan = plan_local_mount("v1", {{"type", "tmpfs"}, {"size", "64m"}, {"o", "mode=700,ro"}}, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->data, "mode=700,size=64m");
  EXPECT_EQ(plan->flags, static_cast<unsigned long>(MS_RDONLY));
  EXPECT_EQ(plan->device, "tmpfs");
}

TEST(local_options, o_elements_are_checked_per_type) {
  auto msg = check({{"type", "tmpfs"}, {"o", "size=1m,exec_anything=1"}});
  EXPECT_TRUE(mentions(msg, "\"exec_anything\"") && mentions(msg, "tmpfs")) << msg;
  msg = check({{"type", "ext4"}, {"device", "/dev/sdb"}, {"o", "noatime,errors=panic"}});
  EXPECT_TRUE(mentions(msg, "\"errors\"")) << msg;
  msg = check({{"type", "nfs"}, {"device", "srv:/export"}, {"o", "addr=1.2.3.4,tls"}});
  EXPECT_TRUE(mentions(msg, "\"tls\"")) << msg;
  msg = check({{"type", "bind"}, {"device", "/srv/x"}, {"o", "size=1m"}});
  EXPECT_TRUE(mentions(msg, "\"size\"")) << msg;
  EXPECT_EQ(check({{"type", "ext4"}, {"device", "/dev/sdb"}, {"o", "noatime,data=ordered,discard"}}),
            "");
  EXPECT_EQ(check({{"type", "nfs4"}, {"device", ":/export"},
                   {"o", "addr=10.0.0.1,nfsvers=4.1,rsize=1048576,hard,timeo=600,noresvport"}}),
            "");
}

TEST(local_options, bind_device_must_be_clean_and_absolute) {
  EXPECT_EQ(check({{"type", "bind"}, {"device", "/srv/data"}}), "");
  EXPECT_TRUE(mentions(check({{"type", "bind"}, {"device", "srv/data"}}), "srv/data"));
  EXPECT_TRUE(mentions(check({{"type", "bind"}, {"device", "/srv/../etc"}}), "/srv/../etc"));
  // Docker's own spelling of a bind volume.
  EXPECT_EQ(check({{"type", "none"}, {"device", "/srv/data"}, {"o", "bind"}}), "");
  EXPECT_TRUE(mentions(check({{"type", "none"}, {"device", "/srv/data"}}), "o=bind"));
  auto plan = plan_local_mount("v1", {{"type", "bind"}, {"device", "/srv"}, {"o", "rbind,ro"}}, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->flags, static_cast<unsigned long>(MS_BIND | MS_REC | MS_RDONLY));
}

TEST(local_options, block_device_must_be_under_dev) {
  EXPECT_TRUE(mentions(check({{"type", "xfs"}, {"device", "/srv/disk.img"}}), "/srv/disk.img"));
  EXPECT_TRUE(mentions(check({{"type", "btrfs"}, {"device", "/dev/../etc/x"}}), "/dev/../etc/x"));
  auto plan = plan_local_mount(
    "v1", {{"type", "ext4"}, {"device", "/dev/loop3"}, {"o", "ro,nosuid,noatime,discard"}}, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->flags, static_cast<unsigned long>(MS_RDONLY | MS_NOSUID | MS_NOATIME));
  EXPECT_EQ(plan->data, "discard");
  EXPECT_FALSE(plan->use_helper);
}

TEST(local_options, nfs_uses_the_helper_in_a_netns) {
  EXPECT_TRUE(mentions(check({{"type", "nfs"}, {"device", "/export"}}), "host:/path"));
  auto plan = plan_local_mount(
    "v1", {{"type", "nfs4"}, {"device", "srv:/export"}, {"o", "hard,netns=/proc/42/ns/net"}}, {});
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->use_helper);
  EXPECT_EQ(plan->netns, "/proc/42/ns/net");
  EXPECT_EQ(helper_command(*plan, "/m"),
            (std::vector<std::string>{"nsenter", "--net=/proc/42/ns/net", "--", "mount", "-t",
                                      "nfs4", "-o", "hard", "--", "srv:/export", "/m"}));
  EXPECT_TRUE(mentions(check({{"type", "nfs4"}, {"device", "srv:/x"}, {"o", "netns=../ns"}}),
                       "netns"));
}

const option_map ecs_efs = {{"type", "efs"},
                            {"device", "fs-0123abcd:/app"},
                            {"o", "tls,iam,accesspoint=fsap-0123,netns=/proc/7/ns/net"}};

TEST(local_options, efs_with_mount_efs_passes_through) {
  EXPECT_EQ(check(ecs_efs), "");
  efs_environment env;
  env.helper_installed = true;
  auto plan = plan_local_mount("v1", ecs_efs, env);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->kind, local_kind::efs);
  EXPECT_EQ(helper_command(*plan, "/m"),
            (std::vector<std::string>{"nsenter", "--net=/proc/7/ns/net", "--", "mount", "-t", "efs",
                                      "-o", "tls,iam,accesspoint=fsap-0123", "--",
                                      "fs-0123abcd:/app", "/m"}));
  // The ECS agent may also say type=nfs4 for an fs-XXXX device.
  option_map as_nfs4 = ecs_efs;
  as_nfs4["type"] = "nfs4";
  plan = plan_local_mount("v1", as_nfs4, env);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->fstype, "efs");
  EXPECT_TRUE(mentions(check({{"type", "efs"}, {"device", "srv:/x"}}), "fs-XXXXXXXX"));
  EXPECT_TRUE(mentions(check({{"type", "efs"}, {"device", "fs-1"}, {"o", "tls,bogus"}}), "\"bogus\""));
}

TEST(local_options, efs_without_mount_efs_becomes_nfs4) {
  efs_environment env;
  env.default_region = "eu-west-1";
  auto plan = plan_local_mount("v1", ecs_efs, env);
  ASSERT_TRUE(plan) << describe(plan.error());
  EXPECT_EQ(plan->fstype, "nfs4");
  EXPECT_EQ(plan->device, "fs-0123abcd.efs.eu-west-1.amazonaws.com:/app");
  EXPECT_EQ(plan->data, "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport");
  EXPECT_EQ(plan->netns, "/proc/7/ns/net");
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_TRUE(mentions(plan->warnings[0], "tls, iam, accesspoint")) << plan->warnings[0];
  // User options override the defaults; region and mount target come from o.
  plan = plan_local_mount("v1", {{"type", "efs"}, {"device", "fs-1"},
                                 {"o", "soft,vers=4.0,region=us-east-2,mounttargetip=10.1.2.3"}},
                          efs_environment{});
  ASSERT_TRUE(plan) << describe(plan.error());
  EXPECT_EQ(plan->device, "10.1.2.3:/");
  EXPECT_EQ(plan->data, "rsize=1048576,wsize=1048576,timeo=600,retrans=2,noresvport,soft,vers=4.0");
  EXPECT_TRUE(plan->warnings.empty());
  // Without a region the fs-id cannot be resolved.
  auto none = plan_local_mount("v1", ecs_efs, efs_environment{});
  ASSERT_FALSE(none);
  EXPECT_TRUE(mentions(describe(none.error()), "region")) << describe(none.error());
}

// -- a device reaches mount(8) only in the shape its type needs ------------------

TEST(local_options, nfs_device_beginning_with_a_dash_is_refused) {
  // mount(8) would read "-T..." as an option naming an fstab file.
  for (const char* device : {"-T/tmp/fstab", "-T", "--fstab=/x:/y", "-h:/export", "-srv:/x"}) {
    auto msg = check({{"type", "nfs"}, {"device", device}});
    EXPECT_TRUE(mentions(msg, "host:/path")) << device << ": " << msg;
  }
}

TEST(local_options, nfs_device_needs_a_valid_host_and_an_absolute_path) {
  for (const char* good : {"srv:/export", "nfs.example.com:/a/b", "10.0.0.2:/", "[fd00::2]:/x",
                           "fs-like-name:/x", "a:/"}) {
    EXPECT_EQ(check({{"type", "nfs4"}, {"device", good}}), "") << good;
  }
  for (const char* bad : {"srv:export", "srv:", "srv:/a/../b", "bad_host:/x", "srv-:/x",
                          "a..b:/x", "fd00::2:/x", "[fd00::zz]:/x", "[fd00::2]/x", "[fd00::2]",
                          "host name:/x", ":/x"}) {
    auto msg = check({{"type", "nfs"}, {"device", bad}});
    EXPECT_TRUE(mentions(msg, "expected host:/path")) << bad << ": " << msg;
  }
  // ":/path" is Docker's form with the server in o=addr=, which must be an address.
  EXPECT_EQ(check({{"type", "nfs"}, {"device", ":/x"}, {"o", "addr=10.0.0.2"}}), "");
  EXPECT_TRUE(mentions(check({{"type", "nfs"}, {"device", ":/x"}, {"o", "addr=-T"}}), "addr"));
  EXPECT_TRUE(mentions(check({{"type", "nfs"}, {"device", "srv:/x"}, {"o", "addr=srv"}}),
                       "IP address"));
}

TEST(local_options, nfs_host_names_and_addresses) {
  EXPECT_TRUE(is_valid_nfs_host("srv"));
  EXPECT_TRUE(is_valid_nfs_host("a-b.c-d.example"));
  EXPECT_TRUE(is_valid_nfs_host("192.168.1.1"));
  EXPECT_TRUE(is_valid_nfs_host("[::1]"));
  EXPECT_FALSE(is_valid_nfs_host(""));
  EXPECT_FALSE(is_valid_nfs_host("-T"));
  EXPECT_FALSE(is_valid_nfs_host("::1"));
  EXPECT_FALSE(is_valid_nfs_host("[]"));
  EXPECT_FALSE(is_valid_nfs_host("a." + std::string(64, 'b')));
  EXPECT_FALSE(is_valid_nfs_host(std::string(254, 'a')));
}

TEST(local_options, tmpfs_device_is_a_label) {
  EXPECT_EQ(check({{"type", "tmpfs"}, {"device", "tmpfs"}}), "");
  EXPECT_EQ(check({{"type", "tmpfs"}, {"device", "my_tmp-1.x"}}), "");
  for (const char* bad : {"-o", "/dev/sda", "a b", "x:/y"}) {
    EXPECT_TRUE(mentions(check({{"type", "tmpfs"}, {"device", bad}}), "label")) << bad;
  }
}

TEST(local_options, efs_mount_target_and_region_are_checked) {
  EXPECT_TRUE(mentions(check({{"type", "efs"}, {"device", "fs-1"}, {"o", "mounttargetip=-T"}}),
                       "mounttargetip"));
  EXPECT_TRUE(mentions(check({{"type", "efs"}, {"device", "fs-1"}, {"o", "region=-x"}}),
                       "region"));
  EXPECT_TRUE(mentions(check({{"type", "efs"}, {"device", "fs-1:/a/../b"}}), "clean absolute path"));
}

TEST(local_options, every_helper_command_ends_options_before_the_device) {
  auto plan = plan_local_mount("v1", {{"type", "nfs"}, {"device", "srv:/export"}}, {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(helper_command(*plan, "/m"),
            (std::vector<std::string>{"mount", "-t", "nfs", "--", "srv:/export", "/m"}));
}

TEST(local_options, overlapping_paths) {
  EXPECT_TRUE(overlaps("/var/lib/berth", "/var/lib/berth"));
  EXPECT_TRUE(overlaps("/var/lib/berth/volumes/x", "/var/lib/berth"));
  EXPECT_TRUE(overlaps("/var/lib", "/var/lib/berth"));
  EXPECT_TRUE(overlaps("/", "/var/lib/berth"));
  EXPECT_FALSE(overlaps("/var/lib/berth2", "/var/lib/berth"));
  EXPECT_FALSE(overlaps("/var/lib/ber", "/var/lib/berth"));
  EXPECT_FALSE(overlaps("/srv/data", "/var/lib/berth"));
}

TEST(local_options, clean_absolute_paths) {
  EXPECT_TRUE(is_clean_absolute_path("/a/b"));
  EXPECT_TRUE(is_clean_absolute_path("/a..b/c"));
  EXPECT_FALSE(is_clean_absolute_path("a/b"));
  EXPECT_FALSE(is_clean_absolute_path("/a/../b"));
  EXPECT_FALSE(is_clean_absolute_path("/a/.."));
  EXPECT_FALSE(is_clean_absolute_path("/a/./b"));
  EXPECT_FALSE(is_clean_absolute_path(""));
}

} // namespace
} // namespace berth
