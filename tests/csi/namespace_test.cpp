// Docker and CSI are separate namespaces (docs/design.md, "Only what berth owns"),
// against the real berthd through its real sockets: the Docker plugin protocol on
// docker.sock, CSI on csi.sock, the admin API on admin.sock. `docker volume prune -a`
// must never delete a Kubernetes volume, and kubelet must never act on a Docker volume.

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

namespace fs = std::filesystem;

/// One HTTP/1.1 request on a unix socket (Connection: close); the whole reply.
std::string http_on(const std::string& socket_path, const std::string& method,
                    const std::string& target, const std::string& body) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return "connect failed";
  }
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: berth\r\n"
                    "Content-Type: application/vnd.docker.plugins.v1+json\r\n"
                    "Content-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n\r\n" + body;
  (void)!::write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) {
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  auto head_end = out.find("\r\n\r\n");
  return head_end == std::string::npos ? out : out.substr(head_end + 4);
}

class NamespaceTest : public csi_fixture {
protected:
  /// POST /VolumeDriver.<what> on berthd's Docker socket; the JSON reply.
  std::string docker(const std::string& what, const std::string& body) {
    return http_on(berthd().state_dir() + "/docker.sock", "POST", "/VolumeDriver." + what, body);
  }
  std::string admin(const std::string& target) {
    return http_on(berthd().state_dir() + "/admin.sock", "GET", target, "");
  }
  std::string image_of(const std::string& name) {
    return berthd().state_dir() + "/block/volumes/" + name + ".img";
  }
  bool csi_lists(const std::string& name) {
    v1::ListVolumesRequest req;
    v1::ListVolumesResponse resp;
    EXPECT_RPC(OK, call(&Ctrl::ListVolumes, req, resp));
    for (const auto& e : resp.entries()) {
      if (e.volume().volume_id() == name) {
        return true;
      }
    }
    return false;
  }
};

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST_F(NamespaceTest, DockerNeitherListsNorRemovesNorMountsACsiVolume) {
  v1::Volume block_vol;
  v1::Volume local_vol;
  ASSERT_TRUE(create_volume("pv-block", &block_vol));
  // The hard case: a CSI volume on the backend Docker uses too.
  ASSERT_TRUE(create_volume(create_request("pv-local", 0, 0, {{"backend", "local"}}), &local_vol));
  ASSERT_TRUE(fs::exists(image_of("pv-block")));
  ASSERT_TRUE(fs::exists(berthd().state_dir() + "/volumes/pv-local"));

  auto list = docker("List", "{}");
  EXPECT_FALSE(has(list, "pv-block")) << list;
  EXPECT_FALSE(has(list, "pv-local")) << list;
  for (const char* name : {"pv-block", "pv-local"}) {
    SCOPED_TRACE(name);
    std::string body = std::string{R"({"Name":")"} + name + "\"}";
    std::string mount_body = std::string{R"({"Name":")"} + name + R"(","ID":"c1"})";
    for (const auto& [what, reply] : {std::pair{"Remove", docker("Remove", body)},
                                      {"Mount", docker("Mount", mount_body)},
                                      {"Unmount", docker("Unmount", mount_body)},
                                      {"Get", docker("Get", body)},
                                      {"Path", docker("Path", body)}}) {
      EXPECT_TRUE(has(reply, "no such volume: " + std::string{name})) << what << ": " << reply;
    }
    auto create = docker("Create", body);
    EXPECT_TRUE(has(create, "taken by a CSI volume")) << create;
  }
  // Both survive, image, directory and record.
  EXPECT_TRUE(fs::exists(image_of("pv-block")));
  EXPECT_TRUE(fs::exists(berthd().state_dir() + "/volumes/pv-local"));
  EXPECT_TRUE(csi_lists("pv-block"));
  EXPECT_TRUE(csi_lists("pv-local"));
  auto all = admin("/v1/volumes");
  EXPECT_TRUE(has(all, R"("name":"pv-block")")) << all;
  EXPECT_TRUE(has(all, R"("owner":"csi")")) << all;
  // ... also after a restart (the owner is durable).
  ASSERT_TRUE(restart(false));
  list = docker("List", "{}");
  EXPECT_FALSE(has(list, "pv-")) << list;
  EXPECT_TRUE(has(docker("Remove", R"({"Name":"pv-local"})"), "no such volume")) << list;
  EXPECT_TRUE(fs::exists(berthd().state_dir() + "/volumes/pv-local"));
  EXPECT_TRUE(csi_lists("pv-local"));
}

TEST_F(NamespaceTest, CsiNeitherListsNorDeletesNorStagesADockerVolume) {
  ASSERT_EQ(docker("Create", R"({"Name":"dock1"})"), R"({"Err":""})");
  auto dir = berthd().state_dir() + "/volumes/dock1";
  ASSERT_TRUE(fs::exists(dir));
  EXPECT_FALSE(csi_lists("dock1"));
  v1::CreateVolumeResponse created;
  EXPECT_RPC(ALREADY_EXISTS, call(&Ctrl::CreateVolume,
                                  create_request("dock1", 0, 0, {{"backend", "local"}}), created));
  // DeleteVolume of a volume CSI does not have is OK by the spec, and deletes nothing.
  EXPECT_TRUE(delete_volume("dock1"));
  EXPECT_TRUE(fs::exists(dir));
  v1::ControllerExpandVolumeRequest expand;
  expand.set_volume_id("dock1");
  expand.mutable_capacity_range()->set_required_bytes(static_cast<int64_t>(GiB));
  v1::ControllerExpandVolumeResponse expanded;
  EXPECT_RPC(NOT_FOUND, call(&Ctrl::ControllerExpandVolume, expand, expanded));
  auto staging = staging_path("dock1");
  v1::NodeStageVolumeRequest stage;
  stage.set_volume_id("dock1");
  stage.set_staging_target_path(staging);
  *stage.mutable_volume_capability() = mount_cap();
  v1::NodeStageVolumeResponse staged;
  EXPECT_RPC(NOT_FOUND, call(&Node::NodeStageVolume, stage, staged));
  auto got = docker("Get", R"({"Name":"dock1"})");
  EXPECT_TRUE(has(got, R"("Name":"dock1")")) << got;
  auto one = admin("/v1/volumes/dock1");
  EXPECT_TRUE(has(one, R"("owner":"docker")")) << one;
}

TEST_F(NamespaceTest, SighupLeavesBerthdRunningAndTheFileLimitIsRaised) {
  ASSERT_EQ(::kill(berthd().pid(), SIGHUP), 0);
  // Logged once berthd handled the signal; a berthd that SIGHUP ends never logs it.
  ASSERT_TRUE(berthd().wait_for_log("SIGHUP received and ignored", std::chrono::seconds(10)))
    << berthd().log_tail();
  int status = 0;
  ASSERT_EQ(::waitpid(berthd().pid(), &status, WNOHANG), 0) << "berthd died of SIGHUP";
  v1::ProbeResponse probe;
  EXPECT_RPC(OK, call(&Ident::Probe, v1::ProbeRequest{}, probe)) << "still answers";
  EXPECT_TRUE(has(docker("List", "{}"), R"("Err":"")"));
  // The soft open-file limit was raised to the hard one.
  std::ifstream limits("/proc/" + std::to_string(berthd().pid()) + "/limits");
  std::string line;
  bool seen = false;
  while (std::getline(limits, line)) {
    if (line.rfind("Max open files", 0) == 0) {
      seen = true;
      std::istringstream in(line.substr(std::string{"Max open files"}.size()));
      std::string soft, hard;
      in >> soft >> hard;
      EXPECT_EQ(soft, hard) << line;
    }
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(berthd().stop(), 0) << "a clean stop after the SIGHUP";
}

} // namespace
} // namespace berth::csi_test
