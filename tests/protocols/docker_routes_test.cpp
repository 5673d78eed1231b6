// The Docker API around the registry (docs/design.md, "Three hops"): a Mount and an
// Unmount go straight to the actor the handles name, Path and Get read the record
// directory, and whatever those do not hold, or a volume actor that quit, still reaches the
// registry (here its stand-in, which knows nothing of the volumes below).

#include <atomic>
#include <memory>
#include <string>

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include "tests/protocols/docker_api_fixture.hpp"

using namespace berth;
using test::err_of;

namespace {

/// A volume that answers only the direct Mount and Unmount, and counts them.
caf::behavior direct_volume(caf::event_based_actor*, std::shared_ptr<std::atomic<int>> asked) {
  return {
    [asked](atom::mount, std::string& id, std::string&, caller&, direct_reply<std::string>& reply) {
      ++*asked;
      reply.deliver("/direct/" + id);
    },
    [asked](atom::unmount, std::string&, direct_reply<atom::ok>& reply) {
      ++*asked;
      reply.deliver(atom::ok_v);
    },
  };
}

class docker_routes_test : public test::docker_api_fixture {
protected:
  std::shared_ptr<volume_handles> handles = std::make_shared<volume_handles>();
  std::shared_ptr<record_directory> directory = std::make_shared<record_directory>();
  std::shared_ptr<std::atomic<int>> asked = std::make_shared<std::atomic<int>>(0);

  void SetUp() override {
    docker_api_fixture::SetUp();
    use_routes({handles, directory});
  }

  volume_actor spawn_direct_volume() {
    return caf::actor_cast<volume_actor>(sys->spawn(direct_volume, asked));
  }
};

} // namespace

TEST_F(docker_routes_test, a_mount_and_an_unmount_go_straight_to_the_volume) {
  auto vol = spawn_direct_volume();
  handles->put("v1", vol);
  EXPECT_EQ(call("Mount", R"({"Name":"v1","ID":"c1"})"), R"({"Mountpoint":"/direct/c1","Err":""})");
  EXPECT_EQ(call("Unmount", R"({"Name":"v1","ID":"c1"})"), R"({"Err":""})");
  EXPECT_EQ(asked->load(), 2) << "the registry, which knows no v1, was not asked";
  caf::anon_send_exit(vol, caf::exit_reason::user_shutdown);
}

TEST_F(docker_routes_test, a_mount_whose_volume_quit_asks_the_registry_instead) {
  EXPECT_EQ(call("Create", R"({"Name":"v1"})"), R"({"Err":""})");
  auto vol = spawn_direct_volume();
  handles->put("v1", vol);
  {
    caf::scoped_actor self{*sys};
    self->send_exit(vol, caf::exit_reason::user_shutdown);
    self->wait_for(vol);
  }
  EXPECT_EQ(call("Mount", R"({"Name":"v1","ID":"c1"})"),
            R"({"Mountpoint":"/mnt/berth/v1","Err":""})")
    << "the registry's answer";
  EXPECT_EQ(asked->load(), 0);
}

TEST_F(docker_routes_test, a_name_the_handles_do_not_hold_is_the_registrys_to_answer) {
  EXPECT_EQ(err_of(call("Mount", R"({"Name":"nope","ID":"c"})")), R"(no volume named "nope")");
  EXPECT_EQ(err_of(call("Unmount", R"({"Name":"nope","ID":"c"})")), R"(no volume named "nope")");
}

TEST_F(docker_routes_test, path_and_get_read_the_directory) {
  volume_record rec;
  rec.name = "d1";
  rec.owner = record_owner::docker;
  rec.mounted = true;
  rec.mountpoint = "/from/the/directory";
  directory->put(std::make_shared<const volume_record>(rec));
  EXPECT_EQ(call("Path", R"({"Name":"d1"})"), R"({"Mountpoint":"/from/the/directory","Err":""})");
  EXPECT_NE(call("Get", R"({"Name":"d1"})").find(R"("Mountpoint":"/from/the/directory")"),
            std::string::npos);

  volume_record csi = rec;
  csi.name = "k1";
  csi.owner = record_owner::csi;
  directory->put(std::make_shared<const volume_record>(csi));
  EXPECT_EQ(err_of(call("Path", R"({"Name":"k1"})")), R"(no volume named "k1")")
    << "another owner's record is the registry's to refuse";
  EXPECT_EQ(err_of(call("Get", R"({"Name":"k1"})")), R"(no volume named "k1")");
}

TEST_F(docker_routes_test, a_docker_snapshot_in_the_directory_is_no_volume) {
  volume_record snap;
  snap.name = "s1";
  snap.owner = record_owner::docker;
  snap.kind = record_kind::snapshot;
  directory->put(std::make_shared<const volume_record>(snap));
  EXPECT_NE(err_of(call("Get", R"({"Name":"s1"})")).find("it is a snapshot"), std::string::npos);
  EXPECT_NE(err_of(call("Path", R"({"Name":"s1"})")).find("it is a snapshot"), std::string::npos);
}

TEST_F(docker_routes_test, a_list_reads_the_directory_and_shows_each_change_at_once) {
  volume_record rec;
  rec.name = "d1";
  rec.owner = record_owner::docker;
  directory->put(std::make_shared<const volume_record>(rec));
  volume_record csi = rec;
  csi.name = "k1";
  csi.owner = record_owner::csi;
  directory->put(std::make_shared<const volume_record>(csi));
  volume_record snap = rec;
  snap.name = "s1";
  snap.kind = record_kind::snapshot;
  directory->put(std::make_shared<const volume_record>(snap));
  EXPECT_EQ(call("List", "{}"), R"({"Volumes":[{"Name":"d1","Mountpoint":""}],"Err":""})")
    << "Docker's volumes only, without asking the registry, which knows none";
  EXPECT_EQ(call("List", "{}"), R"({"Volumes":[{"Name":"d1","Mountpoint":""}],"Err":""})");

  rec.mounted = true;
  rec.mountpoint = "/m/d1";
  directory->put(std::make_shared<const volume_record>(rec));
  EXPECT_EQ(call("List", "{}"), R"({"Volumes":[{"Name":"d1","Mountpoint":"/m/d1"}],"Err":""})")
    << "a commit is listed by the next List";
  directory->erase("d1");
  EXPECT_EQ(call("List", "{}"), R"({"Volumes":[],"Err":""})") << "and so is an erasure";
}
