#include "protocols/metrics/exposition.hpp"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/protocols/metrics/refusal.hpp"

using namespace berth::metrics;
using berth::metrics::test::refusal;

namespace {

family counter(std::string name, std::vector<series> values = {}) {
  return family{std::move(name), "Things done.", metric_type::counter, std::move(values), {}};
}

} // namespace

// -- HELP and TYPE -------------------------------------------------------------

TEST(exposition, help_and_type_once_per_family_then_its_series) {
  auto out = render({
    counter("berth_ops_total", {{{{"op", "mount"}}, 3}, {{{"op", "unmount"}}, 2}}),
    family{"berth_volumes", "Volumes known.", metric_type::gauge, {{{}, 7}}, {}},
  });
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP berth_ops_total Things done.\n"
                  "# TYPE berth_ops_total counter\n"
                  "berth_ops_total{op=\"mount\"} 3\n"
                  "berth_ops_total{op=\"unmount\"} 2\n"
                  "# HELP berth_volumes Volumes known.\n"
                  "# TYPE berth_volumes gauge\n"
                  "berth_volumes 7\n");
}

TEST(exposition, a_family_without_series_still_gets_help_and_type) {
  auto out = render({counter("berth_ops_total")});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP berth_ops_total Things done.\n# TYPE berth_ops_total counter\n");
}

TEST(exposition, no_families_is_an_empty_page) {
  auto out = render({});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, "");
}

TEST(exposition, help_escapes_backslash_and_newline_only) {
  auto f = counter("x_total", {{{}, 1}});
  f.help = "a \\ b\nc \"quoted\" \t tab";
  auto out = render({f});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP x_total a \\\\ b\\nc \"quoted\" \t tab\n"
                  "# TYPE x_total counter\n"
                  "x_total 1\n");
}

TEST(exposition, empty_or_non_utf8_help_is_refused) {
  auto f = counter("x_total");
  f.help = "";
  EXPECT_NE(refusal({f}).find("family x_total has no HELP text"), std::string::npos);
  f.help = "bad \xff byte";
  EXPECT_NE(refusal({f}).find("HELP text of family x_total is not valid UTF-8"),
            std::string::npos);
  f.help = "grüße ✓";
  EXPECT_TRUE(render({f}));
}

// -- label values --------------------------------------------------------------

TEST(exposition, label_values_escape_backslash_quote_and_newline) {
  auto out = render({counter("x_total", {{{{"path", "C:\\dir \"a\"\nb\tc"}}, 1}})});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_NE(out->find("x_total{path=\"C:\\\\dir \\\"a\\\"\\nb\tc\"} 1\n"), std::string::npos)
    << *out;
  EXPECT_EQ(escape_label_value("\\\"\n"), "\\\\\\\"\\n");
  EXPECT_EQ(escape_label_value("plain"), "plain");
  EXPECT_EQ(escape_help("\"\\\n"), "\"\\\\\\n");
}

TEST(exposition, empty_label_values_and_utf8_are_kept) {
  auto out = render({counter("x_total", {{{{"a", ""}, {"b", "ünï"}}, 1}})});
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_NE(out->find("x_total{a=\"\",b=\"ünï\"} 1\n"), std::string::npos) << *out;
}

TEST(exposition, label_values_that_are_not_utf8_are_refused) {
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "\x80"}) {
    auto msg = refusal({counter("x_total", {{{{"v", bad}}, 1}})});
    EXPECT_NE(msg.find("value of label v in series x_total"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not valid UTF-8"), std::string::npos) << msg;
  }
}

// -- names ---------------------------------------------------------------------

TEST(exposition, metric_names_follow_the_prometheus_grammar) {
  for (const char* good : {"x", "_x", ":x", "berth_ops_total", "a:b_c9", "X"}) {
    EXPECT_TRUE(is_valid_metric_name(good)) << good;
  }
  for (const char* bad : {"", "9x", "x-y", "x y", "x.y", "é", "x\n", "x{"}) {
    EXPECT_FALSE(is_valid_metric_name(bad)) << bad;
  }
}

TEST(exposition, label_names_follow_the_grammar_and_leave_double_underscore_alone) {
  for (const char* good : {"a", "_a", "a_b9", "A", "_"}) {
    EXPECT_TRUE(is_valid_label_name(good)) << good;
  }
  for (const char* bad : {"", "9a", "a:b", "a-b", "__name__", "__x", "a b"}) {
    EXPECT_FALSE(is_valid_label_name(bad)) << bad;
  }
}

TEST(exposition, an_invalid_metric_name_is_refused_by_name) {
  auto msg = refusal({counter("9lives_total", {{{}, 1}})});
  EXPECT_NE(msg.find("metric family name \"9lives_total\" is invalid"), std::string::npos) << msg;
  msg = refusal({counter("ok_total"), counter("bad-name")});
  EXPECT_NE(msg.find("\"bad-name\""), std::string::npos) << msg;
}

TEST(exposition, an_invalid_label_name_is_refused_by_name_and_series) {
  auto msg = refusal({counter("x_total", {{{{"bad-label", "1"}}, 1}})});
  EXPECT_NE(msg.find("label name \"bad-label\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("of family x_total"), std::string::npos) << msg;
  msg = refusal({counter("x_total", {{{{"", "1"}}, 1}})});
  EXPECT_NE(msg.find("label name \"\""), std::string::npos) << msg;
}

TEST(exposition, reserved_label_names_are_refused) {
  auto msg = refusal({counter("x_total", {{{{"__name__", "y"}}, 1}})});
  EXPECT_NE(msg.find("label name \"__name__\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("reserved"), std::string::npos) << msg;
}

TEST(exposition, a_label_name_twice_in_one_series_is_refused) {
  auto msg = refusal({counter("x_total", {{{{"a", "1"}, {"a", "2"}}, 1}})});
  EXPECT_NE(msg.find("label name \"a\" appears twice"), std::string::npos) << msg;
}

// -- ordering ------------------------------------------------------------------

TEST(exposition, families_sort_by_name_series_by_label_set_labels_by_name) {
  auto out = render({
    family{"b_gauge_value", "B.", metric_type::gauge, {{{{"z", "1"}, {"a", "2"}}, 1}}, {}},
    counter("a_total", {{{{"op", "b"}}, 2}, {{}, 0}, {{{"op", "a"}, {"code", "ok"}}, 1},
                        {{{"op", "a"}}, 3}}),
  });
  ASSERT_TRUE(out) << berth::describe(out.error());
  EXPECT_EQ(*out, "# HELP a_total Things done.\n"
                  "# TYPE a_total counter\n"
                  "a_total 0\n"
                  "a_total{code=\"ok\",op=\"a\"} 1\n"
                  "a_total{op=\"a\"} 3\n"
                  "a_total{op=\"b\"} 2\n"
                  "# HELP b_gauge_value B.\n"
                  "# TYPE b_gauge_value gauge\n"
                  "b_gauge_value{a=\"2\",z=\"1\"} 1\n");
}

TEST(exposition, the_same_families_in_any_order_render_byte_for_byte_the_same) {
  std::vector<family> families;
  for (int f = 0; f < 6; ++f) {
    auto fam = counter("fam" + std::to_string(f) + "_total");
    for (int s = 0; s < 8; ++s) {
      fam.values.push_back({{{"b", std::to_string(s % 3)}, {"a", std::to_string(s)}}, double(s)});
    }
    families.push_back(fam);
  }
  auto first = render(families);
  ASSERT_TRUE(first) << berth::describe(first.error());
  std::mt19937 rng{42};
  for (int round = 0; round < 50; ++round) {
    std::shuffle(families.begin(), families.end(), rng);
    for (auto& fam : families) {
      std::shuffle(fam.values.begin(), fam.values.end(), rng);
      for (auto& s : fam.values) {
        std::shuffle(s.labels.begin(), s.labels.end(), rng);
      }
    }
    auto again = render(families);
    ASSERT_TRUE(again);
    ASSERT_EQ(*again, *first) << "round " << round;
  }
}

// -- duplicates ----------------------------------------------------------------

TEST(exposition, two_series_with_one_label_set_are_refused) {
  auto msg = refusal({counter("x_total", {{{{"op", "a"}, {"code", "ok"}}, 1},
                                          {{{"code", "ok"}, {"op", "a"}}, 2}})});
  EXPECT_NE(msg.find("family x_total has two series x_total{code=\"ok\",op=\"a\"}"),
            std::string::npos)
    << msg;
}

TEST(exposition, two_unlabelled_series_are_refused) {
  auto msg = refusal({counter("x_total", {{{}, 1}, {{}, 2}})});
  EXPECT_NE(msg.find("has two series x_total:"), std::string::npos) << msg;
}

TEST(exposition, two_families_of_one_name_are_refused) {
  auto msg = refusal({counter("x_total", {{{{"a", "1"}}, 1}}), counter("y_total"),
                      counter("x_total", {{{{"a", "2"}}, 1}})});
  EXPECT_NE(msg.find("two metric families are named x_total"), std::string::npos) << msg;
  family gauge{"x_total", "Same name, other type.", metric_type::gauge, {}, {}};
  msg = refusal({counter("x_total"), gauge});
  EXPECT_NE(msg.find("two metric families are named x_total"), std::string::npos) << msg;
}

// -- values by type ------------------------------------------------------------

TEST(exposition, a_negative_counter_is_refused_a_negative_gauge_is_not) {
  auto msg = refusal({counter("x_total", {{{{"a", "1"}}, -1}})});
  EXPECT_NE(msg.find("counter x_total{a=\"1\"} is -1"), std::string::npos) << msg;
  auto out = render({family{"g", "G.", metric_type::gauge, {{{}, -1.5}}, {}}});
  ASSERT_TRUE(out);
  EXPECT_NE(out->find("\ng -1.5\n"), std::string::npos) << *out;
}

TEST(exposition, series_of_the_wrong_kind_for_the_type_are_refused) {
  family h{"h_seconds", "H.", metric_type::histogram, {{{}, 1}}, {}};
  EXPECT_NE(refusal({h}).find("histogram family h_seconds has plain values"), std::string::npos);
  family g{"g", "G.", metric_type::gauge, {}, {{{}, {}}}};
  EXPECT_NE(refusal({g}).find("gauge family g has histogram series"), std::string::npos);
}

TEST(exposition, content_type_names_version_0_0_4) {
  EXPECT_STREQ(content_type, "text/plain; version=0.0.4; charset=utf-8");
}
