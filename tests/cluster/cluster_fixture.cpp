#include "tests/cluster/cluster_fixture.hpp"

#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "protocols/kube/kube_factory.hpp"

namespace berth::cluster_test {

namespace {

struct running_cluster {
  child_process apiserver;
  child_process controller_process;
  csi_test::berthd_process n1;
  csi_test::berthd_process n2;
  std::unique_ptr<kube::object_api> api;
  std::shared_ptr<grpc::Channel> controller_channel;
  std::unique_ptr<v1::Controller::Stub> controller;
  std::unique_ptr<v1::Node::Stub> node1;
  std::unique_ptr<v1::Node::Stub> node2;
};

std::unique_ptr<running_cluster> the_cluster;

std::shared_ptr<grpc::Channel> channel_to(const std::string& socket) {
  return grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
}

/// Creates the Node object `name`, as kubelet would register it.
std::string register_node(kube::object_api& api, const std::string& name) {
  auto made = api.create_object(
    kube::nodes(), R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"("}})",
    std::chrono::steady_clock::now() + std::chrono::seconds(10));
  return made ? "" : "cannot create Node " + name;
}

} // namespace

std::string cluster::root_;

std::string& cluster::missing() {
  static std::string why;
  return why;
}

bool cluster::real_server() {
  std::ifstream kind{root_ + "/api/kind"};
  std::string word;
  kind >> word;
  return word == "real";
}

void cluster::start_cluster(const cluster_options& opts) {
  missing() = csi_test::berthd_process::missing_prerequisite();
  if (!missing().empty()) {
    return;
  }
  char dir[] = "/tmp/berth-cluster-XXXXXX";
  root_ = ::mkdtemp(dir) ? dir : "";
  auto c = std::make_unique<running_cluster>();
  auto api_dir = root_ + "/api";
  std::filesystem::create_directories(api_dir);
  auto err = c->apiserver.start({"/usr/bin/python3", BERTH_SOURCE_DIR "/tests/kube_apiserver/api_server.py",
                                 "--dir", api_dir, "--deploy", BERTH_SOURCE_DIR "/deploy/kubernetes",
                                 "--bookmark-seconds", "1", "--status-write-latency-ms",
                                 std::to_string(opts.status_write_latency_ms)},
                                root_ + "/apiserver.log");
  // A real server starts etcd, itself, and takes the CRDs and RBAC: seconds, not one.
  if (!err.empty() || !wait_for_file(api_dir + "/port", std::chrono::seconds(120))) {
    missing() = "the API server did not start: " + err + tail_of(root_ + "/apiserver.log");
    return;
  }
  auto kubeconfig = api_dir + "/kubeconfig";
  auto api = kube::make_object_api(kubeconfig);
  if (!api) {
    missing() = "no client for the API server";
    return;
  }
  c->api = std::move(*api);
  for (const char* n : {"n1", "n2"}) {
    if (auto why = register_node(*c->api, n); !why.empty()) {
      missing() = why;
      return;
    }
  }
  int i = 1;
  for (auto* node : {&c->n1, &c->n2}) {
    node->node_id = "n" + std::to_string(i++);
    node->extra_args = {"--kubernetes", "--kubeconfig", api_dir + "/kubeconfig-node", "--docker-api", "",
                        "--log-level", "debug"};
    if (auto why = node->start(); !why.empty()) {
      missing() = "berthd " + node->node_id + " did not start: " + why;
      return;
    }
  }
  auto ctl_socket = root_ + "/controller/csi.sock";
  err = c->controller_process.start({csi_test::berthd_process::binary(), "controller",
                                     "--csi-endpoint", "unix://" + ctl_socket, "--kubeconfig",
                                     api_dir + "/kubeconfig-controller", "--log-level", "debug"},
                                    root_ + "/controller.log");
  if (!err.empty() || !wait_for_file(ctl_socket, std::chrono::seconds(20))) {
    missing() = "berthd controller did not start: " + err + tail_of(root_ + "/controller.log");
    return;
  }
  c->controller_channel = channel_to(ctl_socket);
  c->controller = v1::Controller::NewStub(c->controller_channel);
  c->node1 = v1::Node::NewStub(channel_to(c->n1.csi_socket()));
  c->node2 = v1::Node::NewStub(channel_to(c->n2.csi_socket()));
  // Up means placeable: a node takes volumes once it reported its capacity, after its
  // first list (slower on a real server than on the stand-in).
  auto reported = [&](const char* node) {
    auto json = c->api->get_object(kube::nodes(), node, std::chrono::steady_clock::now() + std::chrono::seconds(5));
    auto cap = json ? kube::parse_node_capacity(*json)
                    : caf::expected<std::map<std::string, uint64_t>>{json.error()};
    return cap && cap->count("block") != 0;
  };
  if (!eventually([&] { return reported("n1") && reported("n2"); }, std::chrono::seconds(60))) {
    missing() = "the nodes did not report their capacity:\n" + c->n1.log_tail() + c->n2.log_tail();
    return;
  }
  the_cluster = std::move(c);
}

void cluster::TearDownTestSuite() {
  if (the_cluster) {
    the_cluster->controller_process.stop();
    the_cluster->n1.stop();
    the_cluster->n2.stop();
    the_cluster->apiserver.stop();
  }
  the_cluster.reset();
  if (!root_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
}

void cluster::SetUp() {
  if (!missing().empty()) {
    GTEST_SKIP() << "SKIPPED (not run): " << missing();
  }
}

void cluster::TearDown() {
  if (!missing().empty() || !real_server()) {
    return;
  }
  // The manifests' RBAC must allow every call berthd makes: a 403 to one of berth's
  // ServiceAccounts is a missing verb, whatever the test itself saw.
  std::ifstream audit{root_ + "/api/audit.log"};
  std::string line;
  std::string forbidden;
  while (std::getline(audit, line)) {
    if (line.find("\"system:serviceaccount:berth-system:") != std::string::npos
        && line.find("\"code\":403") != std::string::npos && line.find("\"ResponseComplete\"") != std::string::npos) {
      forbidden += line + "\n";
    }
  }
  EXPECT_TRUE(forbidden.empty()) << "the API server forbade berth's ServiceAccounts:\n" << forbidden;
}

std::unique_ptr<grpc::ClientContext> cluster::call(std::chrono::seconds limit) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + limit);
  return ctx;
}

v1::Controller::Stub& cluster::controller() {
  return *the_cluster->controller;
}

v1::Node::Stub& cluster::node(int n) {
  return n == 1 ? *the_cluster->node1 : *the_cluster->node2;
}

csi_test::berthd_process& cluster::berthd(int n) {
  return n == 1 ? the_cluster->n1 : the_cluster->n2;
}

kube::object_api& cluster::api() {
  return *the_cluster->api;
}

v1::CreateVolumeRequest cluster::create_request(const std::string& name, int64_t bytes,
                                                const std::string& node) {
  v1::CreateVolumeRequest req;
  req.set_name(name);
  req.mutable_capacity_range()->set_required_bytes(bytes);
  auto* cap = req.add_volume_capabilities();
  cap->mutable_mount()->set_fs_type("ext4");
  cap->mutable_access_mode()->set_mode(v1::VolumeCapability::AccessMode::SINGLE_NODE_WRITER);
  (*req.mutable_parameters())["backend"] = "block";
  if (!node.empty()) {
    auto* topo = req.mutable_accessibility_requirements()->add_requisite();
    (*topo->mutable_segments())["topology.berth.csi.dev/node"] = node;
    *req.mutable_accessibility_requirements()->add_preferred() = *topo;
  }
  return req;
}

std::optional<kube::volume_object> cluster::object_of(const std::string& csi_name) {
  auto json = api().get_object(kube::berth_volumes(), kube::object_name_for(csi_name),
                               std::chrono::steady_clock::now() + std::chrono::seconds(10));
  if (!json) {
    return std::nullopt;
  }
  auto obj = kube::parse_volume_object(*json);
  return obj ? std::optional<kube::volume_object>{*obj} : std::nullopt;
}

bool cluster::eventually(const std::function<bool()>& done, std::chrono::seconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

std::string cluster::logs() {
  if (!the_cluster) {
    return {};
  }
  return "--- controller:\n" + tail_of(root_ + "/controller.log") + "--- n1:\n"
         + the_cluster->n1.log_tail() + "--- n2:\n" + the_cluster->n2.log_tail();
}

} // namespace berth::cluster_test
