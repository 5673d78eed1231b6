#include "protocols/kube/kube_json.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;
using namespace berth::kube;

// Shapes as kube-apiserver sends them (abridged only in fields berth ignores).

TEST(kube_json, node_with_taints) {
  auto node = parse_node(R"({"kind":"Node","apiVersion":"v1",
    "metadata":{"name":"n1","resourceVersion":"77","labels":{"a":"b"}},
    "spec":{"podCIDR":"10.244.1.0/24","unschedulable":true,
            "taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule","timeAdded":"2026-01-01T00:00:00Z"},
                      {"key":"karpenter.sh/disruption","value":"disrupting","effect":"NoSchedule"}]},
    "status":{"conditions":[]}})");
  ASSERT_TRUE(node) << describe(node.error());
  EXPECT_TRUE(node->found);
  EXPECT_TRUE(node->unschedulable);
  ASSERT_EQ(node->taints.size(), 2u);
  EXPECT_EQ(node->taints[0].key, "node.kubernetes.io/unschedulable");
  EXPECT_EQ(node->taints[0].value, "");
  EXPECT_EQ(node->taints[1].value, "disrupting");
  EXPECT_EQ(node->taints[1].effect, "NoSchedule");
}

TEST(kube_json, node_without_spec_fields_is_schedulable) {
  auto node = parse_node(R"({"kind":"Node","metadata":{"name":"n1"},"spec":{}})");
  ASSERT_TRUE(node);
  EXPECT_FALSE(node->unschedulable);
  EXPECT_TRUE(node->taints.empty());
  EXPECT_FALSE(parse_node("not json"));
}

TEST(kube_json, attachment_list) {
  auto page = parse_attachment_list(R"({"kind":"VolumeAttachmentList","apiVersion":"storage.k8s.io/v1",
    "metadata":{"resourceVersion":"1234","continue":"eyJ2IjoxfQ","remainingItemCount":3},
    "items":[{"metadata":{"name":"csi-abc","resourceVersion":"1200"},
              "spec":{"attacher":"berth.csi.dev","nodeName":"n1","source":{"persistentVolumeName":"pv-1"}},
              "status":{"attached":true}},
             {"metadata":{"name":"csi-inline"},
              "spec":{"attacher":"other.csi","nodeName":"n2","source":{"inlineVolumeSpec":{"csi":{}}}}}]})");
  ASSERT_TRUE(page) << describe(page.error());
  EXPECT_EQ(page->resource_version, "1234");
  EXPECT_EQ(page->next, "eyJ2IjoxfQ");
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].name, "csi-abc");
  EXPECT_EQ(page->items[0].attacher, "berth.csi.dev");
  EXPECT_EQ(page->items[0].node, "n1");
  EXPECT_EQ(page->items[0].volume, "pv-1");
  EXPECT_EQ(page->items[1].volume, "");
  auto empty = parse_attachment_list(R"({"metadata":{"resourceVersion":"5"},"items":null})");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->items.empty());
  EXPECT_TRUE(empty->next.empty());
}

TEST(kube_json, watch_lines) {
  auto added = parse_watch_line(R"({"type":"ADDED","object":{"kind":"VolumeAttachment",
    "metadata":{"name":"va","resourceVersion":"9"},"spec":{"attacher":"d","nodeName":"n","source":{"persistentVolumeName":"pv"}}}})");
  ASSERT_TRUE(added);
  EXPECT_EQ(added->event.type, "ADDED");
  EXPECT_EQ(added->event.resource_version, "9");
  EXPECT_EQ(added->event.object.volume, "pv");
  auto bookmark = parse_watch_line(
    R"({"type":"BOOKMARK","object":{"kind":"VolumeAttachment","metadata":{"resourceVersion":"12"}}})");
  ASSERT_TRUE(bookmark);
  EXPECT_EQ(bookmark->event.resource_version, "12");
  auto error = parse_watch_line(R"j({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",
    "metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}})j");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->status.code, 410);
  EXPECT_EQ(error->status.reason, "Expired");
  EXPECT_FALSE(parse_watch_line(R"({"object":{}})"));
  EXPECT_FALSE(parse_watch_line(R"({"type":"ADDED"})"));
}

TEST(kube_json, status) {
  auto st = parse_status(R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"nodes \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"nodes"},"code":404})");
  EXPECT_EQ(st.code, 404);
  EXPECT_EQ(st.message, "nodes \"x\" not found");
  EXPECT_EQ(parse_status("<html>").code, 0);
}
