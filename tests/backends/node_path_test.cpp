// Confinement of CSI node paths to the kubelet dir (backends/node_path.hpp):
// every refusal, and the canonical spelling through symlinked parents.
#include "backends/node_path.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "temp_state.hpp"

namespace berth {
namespace {

namespace fs = std::filesystem;

class node_path_test : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(state_.path().empty());
    root_ = fs::canonical(state_.path()).string();
    kubelet_ = root_ + "/kubelet";
    fs::create_directories(kubelet_ + "/pods");
    fs::create_directories(root_ + "/outside");
  }

  caf::expected<std::string> confine(const std::string& path) const {
    return confine_node_path(path, kubelet_, "target_path");
  }

  /// The path is refused as INVALID_ARGUMENT with a message naming it and `field`.
  ::testing::AssertionResult refused(const std::string& path) const {
    auto got = confine(path);
    if (got) {
      return ::testing::AssertionFailure() << path << " was accepted as " << *got;
    }
    auto msg = describe(got.error());
    if (static_cast<ec>(got.error().code()) != ec::invalid_argument
        || msg.find("target_path") == std::string::npos) {
      return ::testing::AssertionFailure() << path << ": " << msg;
    }
    return ::testing::AssertionSuccess();
  }

  test::temp_state state_;
  std::string root_;
  std::string kubelet_;
};

TEST_F(node_path_test, a_path_below_the_kubelet_dir_is_its_own_canonical_spelling) {
  auto got = confine(kubelet_ + "/pods/p1/vol");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, kubelet_ + "/pods/p1/vol") << "missing components below an existing ancestor";
  got = confine(kubelet_ + "/pods");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, kubelet_ + "/pods");
}

TEST_F(node_path_test, paths_elsewhere_are_refused) {
  EXPECT_TRUE(refused(root_ + "/outside/t"));
  EXPECT_TRUE(refused(kubelet_)) << "the kubelet dir itself is not below it";
  EXPECT_TRUE(refused(kubelet_ + "-other/t")) << "a sibling sharing its prefix";
  EXPECT_TRUE(refused("/"));
  EXPECT_TRUE(refused("relative/t"));
  EXPECT_TRUE(refused(kubelet_ + "/pods/../../outside/t"));
  EXPECT_TRUE(refused(kubelet_ + "/pods//t"));
  EXPECT_TRUE(refused(kubelet_ + "/pods/t/"));
  EXPECT_TRUE(refused(""));
}

TEST_F(node_path_test, a_symlinked_parent_that_leaves_the_kubelet_dir_is_refused) {
  fs::create_symlink(root_ + "/outside", kubelet_ + "/escape");
  EXPECT_TRUE(refused(kubelet_ + "/escape/t"));
  EXPECT_TRUE(refused(kubelet_ + "/escape/deeper/t")) << "also below a missing component";
}

TEST_F(node_path_test, a_symlink_as_the_last_component_is_refused) {
  fs::create_symlink(kubelet_ + "/pods", kubelet_ + "/link");
  EXPECT_TRUE(refused(kubelet_ + "/link")) << "even one pointing inside the kubelet dir";
  fs::create_symlink(kubelet_ + "/nowhere", kubelet_ + "/dangling");
  EXPECT_TRUE(refused(kubelet_ + "/dangling"));
}

TEST_F(node_path_test, a_symlinked_parent_inside_the_kubelet_dir_resolves) {
  fs::create_symlink(kubelet_ + "/pods", kubelet_ + "/alias");
  auto got = confine(kubelet_ + "/alias/p1");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, kubelet_ + "/pods/p1");
  EXPECT_EQ(canonical_node_path(kubelet_ + "/alias/p1"), kubelet_ + "/pods/p1");
}

TEST_F(node_path_test, a_symlinked_kubelet_dir_confines_to_where_it_points) {
  // /var/lib/kubelet -> /data/kubelet: both spellings name the same paths.
  fs::create_symlink(kubelet_, root_ + "/kubelet-link");
  auto got = confine_node_path(root_ + "/kubelet-link/pods/p1", root_ + "/kubelet-link", "f");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, kubelet_ + "/pods/p1");
  got = confine_node_path(kubelet_ + "/pods/p1", root_ + "/kubelet-link", "f");
  ASSERT_TRUE(got) << describe(got.error());
  EXPECT_EQ(*got, kubelet_ + "/pods/p1");
}

TEST_F(node_path_test, a_missing_kubelet_dir_refuses_everything) {
  auto got = confine_node_path(root_ + "/none/p", root_ + "/none", "f");
  ASSERT_FALSE(got);
  EXPECT_EQ(static_cast<ec>(got.error().code()), ec::invalid_argument);
  EXPECT_NE(describe(got.error()).find("--kubelet-dir"), std::string::npos)
    << describe(got.error());
}

TEST_F(node_path_test, canonical_node_path_keeps_what_it_cannot_resolve) {
  EXPECT_EQ(canonical_node_path("relative"), "relative");
  EXPECT_EQ(canonical_node_path(root_ + "/outside/x"), root_ + "/outside/x");
}

} // namespace
} // namespace berth
