#include "protocols/metrics/exposition.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include "core/errors.hpp"

namespace berth::metrics {

namespace {

// -- helpers ------------------------------------------------------------------

/// `s` in double quotes, escaped like a label value, for error messages.
std::string quoted(std::string_view s) {
  return "\"" + escape_label_value(s) + "\"";
}

// -- validation ---------------------------------------------------------------

caf::error invalid(std::string message) {
  return make_error(ec::invalid_argument, std::move(message));
}

/// `{a="1",b="2"}`, or "" for no labels; `extra` (the bucket's le) goes last.
std::string label_text(const label_set& labels, const label* extra = nullptr) {
  if (labels.empty() && extra == nullptr) {
    return "";
  }
  std::string out = "{";
  bool first = true;
  auto put = [&](const label& l) {
    if (!first) {
      out += ',';
    }
    first = false;
    out += l.first;
    out += "=\"";
    out += escape_label_value(l.second);
    out += '"';
  };
  for (const auto& l : labels) {
    put(l);
  }
  if (extra != nullptr) {
    put(*extra);
  }
  out += '}';
  return out;
}

/// Checks one series' labels and returns them sorted by name.
caf::expected<label_set> canonical_labels(const family& f, const label_set& labels) {
  auto sorted = labels;
  std::sort(sorted.begin(), sorted.end(),
            [](const label& a, const label& b) { return a.first < b.first; });
  auto where = [&] { return "series " + f.name + label_text(sorted) + " of family " + f.name; };
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& name = sorted[i].first;
    if (name.size() >= 2 && name[0] == '_' && name[1] == '_') {
      return invalid("label name " + quoted(name) + " in " + where()
                     + " is reserved: names starting with __ belong to Prometheus");
    }
    if (!is_valid_label_name(name)) {
      return invalid("label name " + quoted(name) + " in " + where()
                     + " is invalid: a label name matches [a-zA-Z_][a-zA-Z0-9_]*");
    }
    if (f.type == metric_type::histogram && name == "le") {
      return invalid("label name \"le\" in " + where()
                     + " is reserved: a histogram's buckets carry it");
    }
    if (i > 0 && sorted[i - 1].first == name) {
      return invalid("label name " + quoted(name) + " appears twice in " + where());
    }
    if (!is_utf8(sorted[i].second)) {
      return invalid("the value of label " + name + " in " + where() + " is not valid UTF-8");
    }
  }
  return sorted;
}

caf::error check_histogram(const std::string& where, const histogram_data& h) {
  const auto& bounds = h.upper_bounds;
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return invalid("histogram " + where + ": bucket bound " + format_value(bounds[i])
                     + " is not finite (the +Inf bucket is implied; leave it out)");
    }
    if (i > 0 && !(bounds[i - 1] < bounds[i])) {
      return invalid("histogram " + where + ": bucket bounds must be strictly increasing, but "
                     + format_value(bounds[i]) + " follows " + format_value(bounds[i - 1]));
    }
  }
  if (h.cumulative_counts.size() != bounds.size()) {
    return invalid("histogram " + where + " has " + std::to_string(bounds.size())
                   + " bucket bounds but " + std::to_string(h.cumulative_counts.size())
                   + " bucket counts: give one cumulative count per bound");
  }
  uint64_t previous = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    auto n = h.cumulative_counts[i];
    if (n < previous) {
      return invalid("histogram " + where + ": bucket counts must be cumulative, but le=\""
                     + format_value(bounds[i]) + "\" has " + std::to_string(n) + " after "
                     + std::to_string(previous) + " (see cumulative())");
    }
    previous = n;
  }
  if (previous > h.count) {
    return invalid("histogram " + where + ": a bucket holds " + std::to_string(previous)
                   + " observations but the count is " + std::to_string(h.count));
  }
  return {};
}

/// A family's series, checked, with their labels sorted, in output order.
template <class Series>
caf::expected<std::vector<std::pair<label_set, const Series*>>>
ordered_series(const family& f, const std::vector<Series>& in) {
  std::vector<std::pair<label_set, const Series*>> out;
  out.reserve(in.size());
  for (const auto& s : in) {
    auto labels = canonical_labels(f, s.labels);
    if (!labels) {
      return std::move(labels.error());
    }
    out.emplace_back(std::move(*labels), &s);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i - 1].first == out[i].first) {
      return invalid("family " + f.name + " has two series " + f.name + label_text(out[i].first)
                     + ": each label set may appear once");
    }
  }
  return out;
}

caf::error check_family(const family& f) {
  if (!is_valid_metric_name(f.name)) {
    return invalid("metric family name " + quoted(f.name)
                   + " is invalid: a metric name matches [a-zA-Z_:][a-zA-Z0-9_:]*");
  }
  if (f.help.empty()) {
    return invalid("family " + f.name + " has no HELP text: say what it measures and its unit");
  }
  if (!is_utf8(f.help)) {
    return invalid("the HELP text of family " + f.name + " is not valid UTF-8");
  }
  if (f.type == metric_type::histogram && !f.values.empty()) {
    return invalid("histogram family " + f.name
                   + " has plain values: put its series in `histograms`");
  }
  if (f.type != metric_type::histogram && !f.histograms.empty()) {
    return invalid(std::string{to_string(f.type)} + " family " + f.name
                   + " has histogram series: only a histogram family may");
  }
  return {};
}

// -- rendering ----------------------------------------------------------------

void put_header(std::string& out, const family& f) {
  out += "# HELP " + f.name + " " + escape_help(f.help) + "\n";
  out += "# TYPE " + f.name + " " + to_string(f.type) + "\n";
}

void put_sample(std::string& out, const std::string& name, const std::string& labels,
                const std::string& value) {
  out += name;
  out += labels;
  out += ' ';
  out += value;
  out += '\n';
}

caf::error render_values(std::string& out, const family& f) {
  auto ordered = ordered_series(f, f.values);
  if (!ordered) {
    return std::move(ordered.error());
  }
  for (const auto& [labels, s] : *ordered) {
    if (f.type == metric_type::counter && s->value < 0) {
      return invalid("counter " + f.name + label_text(labels) + " is " + format_value(s->value)
                     + ": a counter never goes below 0");
    }
  }
  put_header(out, f);
  for (const auto& [labels, s] : *ordered) {
    put_sample(out, f.name, label_text(labels), format_value(s->value));
  }
  return {};
}

caf::error render_histograms(std::string& out, const family& f) {
  auto ordered = ordered_series(f, f.histograms);
  if (!ordered) {
    return std::move(ordered.error());
  }
  for (const auto& [labels, s] : *ordered) {
    if (auto err = check_histogram(f.name + label_text(labels), s->data)) {
      return err;
    }
  }
  put_header(out, f);
  const auto bucket = f.name + "_bucket";
  for (const auto& [labels, s] : *ordered) {
    const auto& h = s->data;
    for (size_t i = 0; i < h.upper_bounds.size(); ++i) {
      label le{"le", format_value(h.upper_bounds[i])};
      put_sample(out, bucket, label_text(labels, &le), std::to_string(h.cumulative_counts[i]));
    }
    label inf{"le", "+Inf"};
    put_sample(out, bucket, label_text(labels, &inf), std::to_string(h.count));
    put_sample(out, f.name + "_sum", label_text(labels), format_value(h.sum));
    put_sample(out, f.name + "_count", label_text(labels), std::to_string(h.count));
  }
  return {};
}

/// Refuses two families of one name, and a family whose name is one a histogram's
/// series take (histogram x writes x_bucket, x_sum and x_count).
caf::error check_names_unique(const std::vector<const family*>& sorted) {
  std::map<std::string, std::string> taken; // sample name -> who writes it
  for (size_t i = 0; i < sorted.size(); ++i) {
    const auto& f = *sorted[i];
    if (i > 0 && sorted[i - 1]->name == f.name) {
      return invalid("two metric families are named " + f.name + ": merge their series");
    }
    std::vector<std::pair<std::string, std::string>> names{{f.name, "family " + f.name}};
    if (f.type == metric_type::histogram) {
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        names.emplace_back(f.name + suffix, "the " + f.name + suffix + " series of histogram "
                                              + f.name);
      }
    }
    for (auto& [name, who] : names) {
      auto [it, fresh] = taken.emplace(name, who);
      if (!fresh) {
        return invalid(who + " collides with " + it->second + ": rename one of them");
      }
    }
  }
  return {};
}

} // namespace

// -- public -------------------------------------------------------------------

caf::expected<std::string> render(const std::vector<family>& families) {
  std::vector<const family*> sorted;
  sorted.reserve(families.size());
  for (const auto& f : families) {
    if (auto err = check_family(f)) {
      return err;
    }
    sorted.push_back(&f);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const family* a, const family* b) { return a->name < b->name; });
  if (auto err = check_names_unique(sorted)) {
    return err;
  }
  std::string out;
  for (const auto* f : sorted) {
    auto err = f->type == metric_type::histogram ? render_histograms(out, *f)
                                                 : render_values(out, *f);
    if (err) {
      return err;
    }
  }
  return out;
}

} // namespace berth::metrics
