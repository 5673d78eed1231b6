#include <gtest/gtest.h>

#include "apps/controller/placement.hpp"
#include "core/errors.hpp"

namespace berth::controller {
namespace {

const capacity_map reported{{"n1", {{"block", 100}, {"local", 5}}},
                            {"n2", {{"block", 300}}},
                            {"n3", {{"block", 200}}}};

TEST(placement, preferred_first_then_requisite) {
  placement_request req{{"n3"}, {"n1", "n3"}, "", "block", 50};
  EXPECT_EQ(*choose_node(req, reported), "n3");
  req.bytes = 250; // n3 and n1 are too small
  auto none = choose_node(req, reported);
  ASSERT_FALSE(none);
  EXPECT_TRUE(is(none.error(), ec::resource_exhausted));
  auto text = describe(none.error());
  EXPECT_NE(text.find("\"n3\" has 200 bytes free"), std::string::npos) << text;
  EXPECT_NE(text.find("\"n1\" has 100 bytes free"), std::string::npos) << text;
}

TEST(placement, without_requirements_the_most_room_wins) {
  placement_request req{{}, {}, "", "block", 10};
  EXPECT_EQ(*choose_node(req, reported), "n2");
  req.backend = "local";
  req.bytes = 5;
  EXPECT_EQ(*choose_node(req, reported), "n1");
}

TEST(placement, a_node_that_never_reported_or_lacks_the_backend_is_passed_over) {
  placement_request req{{"n9", "n2"}, {}, "", "local", 1};
  auto none = choose_node(req, reported);
  ASSERT_FALSE(none);
  auto text = describe(none.error());
  EXPECT_NE(text.find("\"n9\" has not reported its capacity"), std::string::npos) << text;
  EXPECT_NE(text.find("\"n2\" has no backend \"local\""), std::string::npos) << text;
  EXPECT_FALSE(choose_node({{}, {}, "", "block", 1}, {}));
}

TEST(placement, a_clone_goes_to_its_source_or_names_both_nodes) {
  placement_request req{{"n2"}, {"n2"}, "n1", "block", 10};
  auto refused = choose_node(req, reported);
  ASSERT_FALSE(refused);
  auto text = describe(refused.error());
  EXPECT_NE(text.find("\"n1\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"n2\""), std::string::npos) << text;
  req.requisite = {"n2", "n1"};
  EXPECT_EQ(*choose_node(req, reported), "n1");
  req.preferred.clear();
  req.requisite.clear();
  EXPECT_EQ(*choose_node(req, reported), "n1");
  req.bytes = 1000; // the source's node is full: no other node will do
  EXPECT_FALSE(choose_node(req, reported));
}

} // namespace
} // namespace berth::controller
