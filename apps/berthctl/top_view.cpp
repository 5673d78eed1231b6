#include "apps/berthctl/top_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"

namespace berth::cli {

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

caf::error malformed(const std::string& what) {
  return make_error(ec::invalid_argument, "an unreadable /v1/operations answer: " + what);
}

const rapidjson::Value* member(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

caf::expected<metrics::histogram_data> read_histogram(const rapidjson::Value& v,
                                                      const std::string& where) {
  if (!v.IsObject()) {
    return malformed(where + ": \"duration\" is not an object");
  }
  auto* bounds = member(v, "upper_bounds");
  auto* counts = member(v, "cumulative_counts");
  auto* sum = member(v, "sum");
  auto* count = member(v, "count");
  if (bounds == nullptr || !bounds->IsArray() || counts == nullptr || !counts->IsArray()
      || sum == nullptr || !sum->IsNumber() || count == nullptr || !count->IsUint64()) {
    return malformed(where + ": \"duration\" needs upper_bounds and cumulative_counts "
                             "(arrays), sum and count");
  }
  if (bounds->Size() != counts->Size()) {
    return malformed(where + ": " + std::to_string(bounds->Size()) + " upper bounds but "
                     + std::to_string(counts->Size()) + " cumulative counts");
  }
  metrics::histogram_data h;
  for (const auto& b : bounds->GetArray()) {
    if (!b.IsNumber()) {
      return malformed(where + ": an upper bound is not a number");
    }
    h.upper_bounds.push_back(b.GetDouble());
  }
  for (const auto& c : counts->GetArray()) {
    if (!c.IsUint64()) {
      return malformed(where + ": a cumulative count is not a non-negative integer");
    }
    h.cumulative_counts.push_back(c.GetUint64());
  }
  h.sum = sum->GetDouble();
  h.count = count->GetUint64();
  return h;
}

/// after - before, or after alone when it went down (a restart between the samples).
uint64_t increase(uint64_t before, uint64_t after) {
  return after >= before ? after - before : after;
}

/// The histogram of the interval: bucket by bucket, unless any count went down or the
/// buckets changed (then `after` alone, as after a restart).
metrics::histogram_data difference(const metrics::histogram_data* before,
                                   const metrics::histogram_data& after) {
  if (before == nullptr || before->upper_bounds != after.upper_bounds
      || before->cumulative_counts.size() != after.cumulative_counts.size()
      || before->count > after.count) {
    return after;
  }
  metrics::histogram_data d = after;
  for (size_t i = 0; i < d.cumulative_counts.size(); ++i) {
    if (before->cumulative_counts[i] > after.cumulative_counts[i]) {
      return after;
    }
    d.cumulative_counts[i] -= before->cumulative_counts[i];
  }
  d.count -= before->count;
  d.sum -= before->sum;
  return d;
}

uint64_t errors_of(const std::map<std::string, uint64_t>& codes) {
  uint64_t n = 0;
  for (const auto& [code, count] : codes) {
    if (code != "ok") {
      n += count;
    }
  }
  return n;
}

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

/// `text` cut to `width` columns (every character here is one byte, one column).
std::string cut(std::string text, size_t width) {
  if (text.size() > width) {
    text.resize(width);
  }
  return text;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

} // namespace

double histogram_quantile(double q, const metrics::histogram_data& h) {
  if (std::isnan(q)) {
    return nan;
  }
  if (q < 0) {
    return -inf;
  }
  if (q > 1) {
    return inf;
  }
  const auto n = h.upper_bounds.size();
  if (n == 0 || h.cumulative_counts.size() != n) {
    return nan;
  }
  // Cumulative counts of the n finite buckets and +Inf, made non-decreasing.
  std::vector<double> cum(n + 1);
  double running = 0;
  for (size_t i = 0; i < n; ++i) {
    running = std::max(running, static_cast<double>(h.cumulative_counts[i]));
    cum[i] = running;
  }
  cum[n] = std::max(running, static_cast<double>(h.count));
  if (cum[n] == 0) {
    return nan;
  }
  const double rank = q * cum[n];
  size_t b = 0;
  while (b < n && !(cum[b] >= rank && cum[b] > 0)) {
    ++b;
  }
  if (b == n) {
    return h.upper_bounds[n - 1]; // in the +Inf bucket: the highest finite bound
  }
  if (b == 0 && h.upper_bounds[0] <= 0) {
    return h.upper_bounds[0];
  }
  const double start = b == 0 ? 0 : h.upper_bounds[b - 1];
  const double end = h.upper_bounds[b];
  const double below = b == 0 ? 0 : cum[b - 1];
  // cum[b] > below: otherwise bucket b - 1 would have held the rank.
  return start + (end - start) * ((rank - below) / (cum[b] - below));
}

caf::expected<operations_sample> parse_operations(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return malformed("not a JSON object");
  }
  auto* t = member(doc, "monotonic_seconds");
  auto* ops = member(doc, "operations");
  if (t == nullptr || !t->IsNumber() || ops == nullptr || !ops->IsArray()) {
    return malformed("it needs monotonic_seconds (a number) and operations (an array)");
  }
  operations_sample out;
  out.monotonic_seconds = t->GetDouble();
  for (const auto& op : ops->GetArray()) {
    if (!op.IsObject()) {
      return malformed("an operation is not an object");
    }
    auto* protocol = member(op, "protocol");
    auto* operation = member(op, "operation");
    auto* count = member(op, "count");
    auto* codes = member(op, "codes");
    auto* duration = member(op, "duration");
    if (protocol == nullptr || !protocol->IsString() || operation == nullptr
        || !operation->IsString() || count == nullptr || !count->IsUint64() || codes == nullptr
        || !codes->IsObject() || duration == nullptr) {
      return malformed("an operation needs protocol, operation, count, codes and duration");
    }
    operation_sample s;
    s.protocol = protocol->GetString();
    s.operation = operation->GetString();
    s.count = count->GetUint64();
    auto where = s.protocol + " " + s.operation;
    for (const auto& c : codes->GetObject()) {
      if (!c.value.IsUint64()) {
        return malformed(where + ": the count of code " + c.name.GetString()
                         + " is not a non-negative integer");
      }
      s.codes[c.name.GetString()] = c.value.GetUint64();
    }
    auto h = read_histogram(*duration, where);
    if (!h) {
      return h.error();
    }
    s.duration = std::move(*h);
    out.operations.push_back(std::move(s));
  }
  return out;
}

top_view compute_top(const operations_sample& before, const operations_sample& after) {
  top_view view;
  view.interval_seconds = after.monotonic_seconds - before.monotonic_seconds;
  const double dt = view.interval_seconds;
  for (const auto& op : after.operations) {
    auto it = std::find_if(before.operations.begin(), before.operations.end(),
                           [&op](const operation_sample& b) {
                             return b.protocol == op.protocol && b.operation == op.operation;
                           });
    const operation_sample* old = it == before.operations.end() ? nullptr : &*it;
    bool restarted = old != nullptr && old->count > op.count;
    if (restarted) {
      old = nullptr;
    }
    auto hist = difference(old ? &old->duration : nullptr, op.duration);
    top_row row;
    row.protocol = op.protocol;
    row.operation = op.operation;
    row.total = op.count;
    auto requests = increase(old ? old->count : 0, op.count);
    auto errors = increase(old ? errors_of(old->codes) : 0, errors_of(op.codes));
    row.rate = dt > 0 ? static_cast<double>(requests) / dt : 0;
    row.error_rate = dt > 0 ? static_cast<double>(errors) / dt : 0;
    row.p50 = histogram_quantile(0.5, hist);
    row.p99 = histogram_quantile(0.99, hist);
    view.rows.push_back(std::move(row));
  }
  std::sort(view.rows.begin(), view.rows.end(), [](const top_row& a, const top_row& b) {
    if (a.rate != b.rate) {
      return a.rate > b.rate;
    }
    if (a.total != b.total) {
      return a.total > b.total;
    }
    return std::tie(a.protocol, a.operation) < std::tie(b.protocol, b.operation);
  });
  return view;
}

std::string format_latency(double seconds) {
  if (std::isnan(seconds)) {
    return "-";
  }
  if (seconds < 0.001) {
    return fixed(seconds * 1e6, 0) + "us";
  }
  if (seconds < 1) {
    return fixed(seconds * 1e3, seconds < 0.01 ? 2 : 1) + "ms";
  }
  return fixed(seconds, 2) + "s";
}

std::string format_top(const top_view& view, std::string_view title, std::string_view status,
                       size_t width, size_t height) {
  std::vector<std::string> lines;
  lines.emplace_back(title);
  if (!status.empty()) {
    lines.emplace_back(status);
  }
  std::vector<std::vector<std::string>> table;
  table.push_back({"PROTOCOL", "OPERATION", "OPS/S", "ERR/S", "P50", "P99", "TOTAL"});
  for (const auto& r : view.rows) {
    table.push_back({r.protocol, r.operation, fixed(r.rate, 1), fixed(r.error_rate, 1),
                     format_latency(r.p50), format_latency(r.p99), std::to_string(r.total)});
  }
  std::vector<size_t> w(table[0].size(), 0);
  for (const auto& row : table) {
    for (size_t i = 0; i < row.size(); ++i) {
      w[i] = std::max(w[i], row[i].size());
    }
  }
  for (const auto& row : table) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      // Names left-aligned, numbers right-aligned under their header.
      line += i < 2 ? pad_right(row[i], w[i]) : pad_left(row[i], w[i]);
      if (i + 1 < row.size()) {
        line += "  ";
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    lines.push_back(std::move(line));
  }
  if (view.rows.empty()) {
    lines.emplace_back("(no operations answered yet)");
  }
  if (height > 0 && lines.size() > height) {
    auto shown = height - 1;
    auto hidden = lines.size() - shown;
    lines.resize(shown);
    lines.push_back("... " + std::to_string(hidden) + " more line(s): enlarge the terminal");
  }
  std::string out;
  for (auto& line : lines) {
    out += cut(std::move(line), width) + "\n";
  }
  return out;
}

std::string top_json(const top_view& view) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  auto quantile = [&w](double v) {
    if (std::isnan(v)) {
      w.Null();
    } else {
      w.Double(v);
    }
  };
  w.StartObject();
  w.Key("interval_seconds");
  w.Double(view.interval_seconds);
  w.Key("operations");
  w.StartArray();
  for (const auto& r : view.rows) {
    w.StartObject();
    w.Key("protocol");
    w.String(r.protocol.c_str(), static_cast<rapidjson::SizeType>(r.protocol.size()));
    w.Key("operation");
    w.String(r.operation.c_str(), static_cast<rapidjson::SizeType>(r.operation.size()));
    w.Key("rate_per_second");
    w.Double(r.rate);
    w.Key("errors_per_second");
    w.Double(r.error_rate);
    w.Key("p50_seconds");
    quantile(r.p50);
    w.Key("p99_seconds");
    quantile(r.p99);
    w.Key("total");
    w.Uint64(r.total);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace berth::cli
