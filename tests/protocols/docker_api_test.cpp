#include "protocols/docker/docker_api.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <caf/all.hpp>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/docker_api_fixture.hpp"

using namespace berth;

namespace {

class docker_api_test : public test::docker_api_fixture {};

using test::err_of;

/// The operation row (docker, `op`) of `stats`.
operation_table::row row_of(const telemetry& stats, const std::string& op) {
  for (auto& r : stats.operations.snapshot()) {
    if (r.key == label_pair{"docker", op}) {
      return r;
    }
  }
  ADD_FAILURE() << "no row docker/" << op;
  return {};
}

/// How many requests of `row` were answered with `code`.
uint64_t with_code(const operation_table::row& row, const std::string& code) {
  for (const auto& [c, n] : row.codes) {
    if (c == code) {
      return n;
    }
  }
  return 0;
}

} // namespace

TEST_F(docker_api_test, activate_and_capabilities) {
  EXPECT_EQ(call("/Plugin.Activate", ""), R"({"Implements":["VolumeDriver"]})");
  EXPECT_EQ(call("Capabilities", "{}"), R"({"Capabilities":{"Scope":"local"}})");
}

TEST_F(docker_api_test, volume_lifecycle_through_every_endpoint) {
  EXPECT_EQ(call("Create", R"({"Name":"v1","Opts":{"type":"tmpfs"}})"), R"({"Err":""})");
  EXPECT_EQ(call("Create", R"({"Name":"v2"})"), R"({"Err":""})");
  EXPECT_EQ(call("Path", R"({"Name":"v1"})"), R"({"Mountpoint":"","Err":""})");
  EXPECT_EQ(call("Mount", R"({"Name":"v1","ID":"c1"})"),
            R"({"Mountpoint":"/mnt/berth/v1","Err":""})");
  EXPECT_EQ(call("Mount", R"({"Name":"v1","ID":"c1"})"),
            R"({"Mountpoint":"/mnt/berth/v1","Err":""})");
  EXPECT_EQ(call("Path", R"({"Name":"v1"})"), R"({"Mountpoint":"/mnt/berth/v1","Err":""})");
  EXPECT_EQ(call("Get", R"({"Name":"v1"})"),
            R"({"Volume":{"Name":"v1","Mountpoint":"/mnt/berth/v1",)"
            R"("CreatedAt":"2026-01-02T03:04:05Z","Status":{"mounts":{"c1":2},)"
            R"("backend":"local","created_at":"2026-01-02T03:04:05Z",)"
            R"("options":{"type":"tmpfs"},"mounted":true,"health":"healthy"}},"Err":""})");
  EXPECT_EQ(call("List", "{}"),
            R"({"Volumes":[{"Name":"v1","Mountpoint":"/mnt/berth/v1"},)"
            R"({"Name":"v2","Mountpoint":""}],"Err":""})");
  EXPECT_EQ(err_of(call("Remove", R"({"Name":"v1"})")), R"(volume "v1" is in use)");
  EXPECT_EQ(call("Unmount", R"({"Name":"v1","ID":"c1"})"), R"({"Err":""})");
  EXPECT_EQ(call("Unmount", R"({"Name":"v1","ID":"c1"})"), R"({"Err":""})");
  EXPECT_EQ(call("Path", R"({"Name":"v1"})"), R"({"Mountpoint":"","Err":""})");
  EXPECT_EQ(call("Remove", R"({"Name":"v1"})"), R"({"Err":""})");
  EXPECT_EQ(call("List", "{}"), R"({"Volumes":[{"Name":"v2","Mountpoint":""}],"Err":""})");
}

TEST_F(docker_api_test, registry_errors_travel_as_err) {
  EXPECT_EQ(err_of(call("Get", R"({"Name":"nope"})")), R"(no volume named "nope")");
  EXPECT_EQ(err_of(call("Mount", R"({"Name":"nope","ID":"c"})")), R"(no volume named "nope")");
  EXPECT_EQ(err_of(call("Path", R"({"Name":"nope"})")), R"(no volume named "nope")");
  EXPECT_EQ(call("Create", R"({"Name":"v","Opts":{"a":"1"}})"), R"({"Err":""})");
  EXPECT_EQ(err_of(call("Create", R"({"Name":"v","Opts":{"a":"2"}})")),
            R"(volume "v" exists with other options)");
}

TEST_F(docker_api_test, invalid_requests_are_refused_with_a_clear_err) {
  EXPECT_EQ(err_of(call("Create", R"({"Name":)")), "malformed JSON at offset 8: Invalid value.");
  EXPECT_EQ(err_of(call("Create", "[]")), "request body must be a JSON object, got an array");
  EXPECT_EQ(err_of(call("Remove", "{}")), R"(missing "Name")");
  EXPECT_EQ(err_of(call("Mount", R"({"Name":"../x","ID":"c"})")),
            R"(invalid volume name "../x": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
  EXPECT_EQ(err_of(call("Unmount", R"({"Name":"v"})")), R"(missing "ID")");
  EXPECT_EQ(err_of(call("Create", R"({"Name":"v","Opts":{"size":1}})")),
            R"(option "size" must be a string, got a number)");
  // Nothing reached the registry.
  EXPECT_EQ(call("List", "{}"), R"({"Volumes":[],"Err":""})");
}

TEST_F(docker_api_test, unknown_endpoint_is_404_and_wrong_method_405) {
  unix_http_client client{path};
  auto unknown = client.post("/VolumeDriver.Explode", "{}");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404u);
  EXPECT_EQ(err_of(unknown->body), R"(unknown endpoint "/VolumeDriver.Explode")");
  auto get = client.get("/VolumeDriver.List");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405u);
  EXPECT_EQ(err_of(get->body), R"(method "GET" not allowed on /VolumeDriver.List: use POST)");
}

TEST_F(docker_api_test, oversized_body_is_413) {
  unix_http_client client{path};
  auto res = client.post("/VolumeDriver.Create", std::string(8000, ' '));
  ASSERT_TRUE(res) << describe(res.error());
  EXPECT_EQ(res->status, 413u);
  EXPECT_EQ(err_of(res->body), "request body exceeds the limit of 4096 bytes");
}

TEST_F(docker_api_test, many_concurrent_clients_are_all_answered) {
  constexpr int threads = 16;
  constexpr int rounds = 200;
  for (int t = 0; t < threads; ++t) {
    ASSERT_EQ(call("Create", R"({"Name":"vol)" + std::to_string(t) + "\"}"), R"({"Err":""})");
  }
  std::atomic<int> good{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] {
      unix_http_client client{path};
      auto body = R"({"Name":"vol)" + std::to_string(t) + R"(","ID":"id)" + std::to_string(t) +
                  "\"}";
      for (int i = 0; i < rounds; ++i) {
        auto m = client.post(i % 2 == 0 ? "/VolumeDriver.Mount" : "/VolumeDriver.Unmount", body);
        if (m && m->status == 200 && err_of(m->body).empty()) {
          ++good;
        }
      }
    });
  }
  for (auto& c : clients) {
    c.join();
  }
  EXPECT_EQ(good.load(), threads * rounds);
  // A request leaves in_flight when its write completes, which may be just after the
  // client has read the answer: wait for that, briefly.
  for (int i = 0; i < 200 && srv->in_flight() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(srv->in_flight(), 0u);
  EXPECT_EQ(call("List", "{}").find("/mnt"), std::string::npos);
}

TEST_F(docker_api_test, csi_snapshots_are_not_docker_volumes) {
  caf::scoped_actor self{*sys};
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.backend = "block";
  self->request(reg, std::chrono::seconds(5), atom::create_v, std::string{"snap-1"}, spec)
    .receive([](volume_record&) {}, [](caf::error& err) { FAIL() << describe(err); });
  call("Create", R"({"Name":"v1"})");
  auto list = call("List", "{}");
  EXPECT_NE(list.find("v1"), std::string::npos) << list;
  EXPECT_EQ(list.find("snap-1"), std::string::npos) << "a snapshot is listed: " << list;
  EXPECT_NE(err_of(call("Get", R"({"Name":"snap-1"})")).find("snap-1"), std::string::npos);
  EXPECT_NE(err_of(call("Remove", R"({"Name":"snap-1"})")).find("snap-1"), std::string::npos);
  bool still_there = false;
  self->request(reg, std::chrono::seconds(5), atom::get_v, std::string{"snap-1"})
    .receive([&](volume_record&) { still_there = true; }, [](caf::error&) {});
  EXPECT_TRUE(still_there) << "Docker's Remove must not delete a CSI snapshot";
}

TEST_F(docker_api_test, dockers_own_snapshots_are_no_volumes_either) {
  caf::scoped_actor self{*sys};
  call("Create", R"({"Name":"v1"})");
  volume_spec spec;
  spec.kind = record_kind::snapshot;
  spec.owner = record_owner::docker; // berthctl snapshot create
  spec.source = volume_source("v1");
  self->request(reg, std::chrono::seconds(5), atom::create_v, std::string{"s1"}, spec)
    .receive([](volume_record&) {}, [](caf::error& err) { FAIL() << describe(err); });
  auto list = call("List", "{}");
  EXPECT_NE(list.find("v1"), std::string::npos) << list;
  EXPECT_EQ(list.find("s1"), std::string::npos) << "a snapshot is listed: " << list;
  EXPECT_EQ(err_of(call("Get", R"({"Name":"s1"})")),
            "no such volume: s1 (it is a snapshot; berthctl snapshot ls lists it)");
  EXPECT_EQ(err_of(call("Path", R"({"Name":"s1"})")),
            "no such volume: s1 (it is a snapshot; berthctl snapshot ls lists it)");
}

TEST_F(docker_api_test, each_request_counts_once_with_its_code_and_duration) {
  EXPECT_EQ(call("Create", R"({"Name":"v1"})"), R"({"Err":""})");
  EXPECT_EQ(err_of(call("Create", R"({"Name":)")), "malformed JSON at offset 8: Invalid value.");
  EXPECT_EQ(err_of(call("Mount", R"({"Name":"nope","ID":"c"})")), R"(no volume named "nope")");
  unix_http_client client{path};
  ASSERT_TRUE(client.post("/VolumeDriver.Explode", "{}"));
  ASSERT_TRUE(client.get("/VolumeDriver.List"));

  auto create = row_of(*stats, "create");
  EXPECT_EQ(with_code(create, "ok"), 1u);
  EXPECT_EQ(with_code(create, "invalid_argument"), 1u) << "refused in the adapter: bad JSON";
  EXPECT_EQ(create.duration.count, 2u);
  EXPECT_GT(create.duration.sum, 0.0);
  auto mount = row_of(*stats, "mount");
  EXPECT_EQ(with_code(mount, "not_found"), 1u);
  EXPECT_EQ(mount.duration.count, 1u);
  EXPECT_EQ(with_code(row_of(*stats, "list"), "invalid_argument"), 1u) << "GET: 405";
  EXPECT_EQ(with_code(row_of(*stats, other_label), "invalid_argument"), 1u)
    << "an unknown endpoint counts as docker/other";
  uint64_t all = 0;
  for (const auto& r : stats->operations.snapshot()) {
    all += r.duration.count;
  }
  EXPECT_EQ(all, 5u) << "every request once, nothing twice";
}

// -- the dockerd behind a request (docs/design.md, "Mount IDs dockerd forgot") ----------

TEST(docker_api_peer, only_a_peer_named_dockerd_gives_a_dockerd_key) {
  auto from = [](process_stat p) {
    return caller::tracked(caller::clock::time_point::max(),
                           std::make_shared<const process_stat>(std::move(p)));
  };
  EXPECT_EQ(dockerd_of(from({4242, 981273, "dockerd"})), "4242@981273");
  EXPECT_EQ(dockerd_of(from({4242, 981273, "berth-bench"})), "");
  EXPECT_EQ(dockerd_of(from({4242, 981273, "dockerd-wrapper"})), "");
  EXPECT_EQ(dockerd_of(from({4242, 981273, "ecs-agent"})), "");
  EXPECT_EQ(dockerd_of(from({0, 0, "dockerd"})), "") << "an unknown pid is no instance";
  EXPECT_EQ(dockerd_of(caller::tracked()), "") << "no peer (TCP, tests)";
  EXPECT_EQ(dockerd_of(caller{}), "");
}

TEST_F(docker_api_test, a_mount_from_dockerd_carries_its_instance_to_the_registry) {
  // The client here is a child process named "dockerd" (prctl), as dockerd connects
  // to the plugin socket: its pid and start time become the Mount's dockerd key.
  EXPECT_EQ(call("Create", R"({"Name":"v1"})"), R"({"Err":""})");
  const std::string body = R"({"Name":"v1","ID":"c89a"})";
  const std::string request = "POST /VolumeDriver.Mount HTTP/1.1\r\nHost: plugin\r\n"
                              "Content-Type: application/json\r\nConnection: close\r\n"
                              "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n"
                              + body;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  int hold[2]; // the child stays until the parent has read its start time
  ASSERT_EQ(::pipe(hold), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe calls after fork in a threaded test binary.
    ::prctl(PR_SET_NAME, "dockerd", 0, 0, 0);
    ::close(hold[1]);
    int c = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (c < 0 || ::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::_exit(2);
    }
    if (::write(c, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
      ::_exit(3);
    }
    char buf[512];
    while (::read(c, buf, sizeof buf) > 0) {
    }
    char byte;
    (void)!::read(hold[0], &byte, 1);
    ::_exit(0);
  }
  ::close(hold[0]);
  // The Mount reached the fake registry once its count shows.
  caf::scoped_actor self{*sys};
  volume_record rec;
  for (int i = 0; i < 200 && rec.mounts.empty(); ++i) {
    self->request(reg, std::chrono::seconds(5), atom::get_v, std::string{"v1"})
      .receive([&](volume_record& r) { rec = r; },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    if (rec.mounts.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  auto instance = read_process_stat(child); // after its prctl: it connected since
  ::close(hold[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's request failed";
  ASSERT_TRUE(instance.known());
  EXPECT_EQ(instance.command, "dockerd");
  ASSERT_EQ(rec.mounts.count("c89a"), 1u);
  EXPECT_EQ(rec.origins["c89a"].dockerd, make_dockerd_key(child, instance.start_ticks));
  // This test process is no dockerd: its own Mounts carry no instance.
  EXPECT_EQ(call("Mount", R"({"Name":"v1","ID":"d1e2"})"),
            R"({"Mountpoint":"/mnt/berth/v1","Err":""})");
  self->request(reg, std::chrono::seconds(5), atom::get_v, std::string{"v1"})
    .receive([&](volume_record& r) { rec = r; },
             [&](caf::error& err) { ADD_FAILURE() << describe(err); });
  EXPECT_EQ(rec.origins["d1e2"].dockerd, "");
}
