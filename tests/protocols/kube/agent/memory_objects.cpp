#include "tests/protocols/kube/agent/memory_objects.hpp"

#include <algorithm>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"

namespace berth::test {

namespace {

using rapidjson::Document;
using rapidjson::Value;

Document parse(const std::string& json) {
  Document d;
  d.Parse(json.c_str());
  if (d.HasParseError() || !d.IsObject()) {
    d.SetObject();
  }
  return d;
}

std::string text(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  v.Accept(w);
  return {buf.GetString(), buf.GetSize()};
}

/// RFC 7386: a patch object merges key by key, null removes, anything else replaces.
void apply_merge(Value& target, const Value& patch, Document::AllocatorType& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) {
    target.SetObject();
  }
  for (auto it = patch.MemberBegin(); it != patch.MemberEnd(); ++it) {
    if (it->value.IsNull()) {
      target.RemoveMember(it->name);
      continue;
    }
    auto found = target.FindMember(it->name);
    if (found == target.MemberEnd()) {
      Value key{it->name, a};
      Value blank;
      target.AddMember(key, blank, a);
      found = target.FindMember(it->name);
    }
    apply_merge(found->value, it->value, a);
  }
}

Value& metadata(Document& d) {
  if (!d.HasMember("metadata") || !d["metadata"].IsObject()) {
    d.RemoveMember("metadata");
    d.AddMember("metadata", Value{rapidjson::kObjectType}, d.GetAllocator());
  }
  return d["metadata"];
}

std::string string_at(const Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  return it != obj.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

void set_string(Document& d, Value& obj, const char* key, const std::string& value) {
  obj.RemoveMember(key);
  obj.AddMember(Value{key, d.GetAllocator()}, Value{value.c_str(), d.GetAllocator()},
                d.GetAllocator());
}

std::vector<std::string> finalizers_of(const Value& meta) {
  std::vector<std::string> out;
  auto it = meta.FindMember("finalizers");
  if (it != meta.MemberEnd() && it->value.IsArray()) {
    for (const auto& f : it->value.GetArray()) {
      if (f.IsString()) {
        out.emplace_back(f.GetString());
      }
    }
  }
  return out;
}

/// Everything of the object that generation counts: all but metadata and status.
std::string content_of(const Document& d) {
  Document copy;
  copy.CopyFrom(d, copy.GetAllocator());
  copy.RemoveMember("metadata");
  copy.RemoveMember("status");
  return text(copy);
}

/// A selector of "key=value" terms joined by commas, against labels or metadata.name.
bool matches(const std::string& json, const kube::list_query& q) {
  auto d = parse(json);
  const auto& meta = metadata(d);
  auto terms_hold = [](const std::string& selector, const std::function<std::string(const std::string&)>& value_of) {
    size_t start = 0;
    while (start < selector.size()) {
      auto end = selector.find(',', start);
      auto term = selector.substr(start, end == std::string::npos ? std::string::npos : end - start);
      auto eq = term.find('=');
      if (eq == std::string::npos || value_of(term.substr(0, eq)) != term.substr(eq + 1)) {
        return false;
      }
      start = end == std::string::npos ? selector.size() : end + 1;
    }
    return true;
  };
  auto labels = meta.FindMember("labels");
  auto label = [&](const std::string& key) {
    if (labels == meta.MemberEnd() || !labels->value.IsObject()) {
      return std::string{};
    }
    return string_at(labels->value, key.c_str());
  };
  auto field = [&](const std::string& key) {
    return key == "metadata.name" ? string_at(meta, "name") : std::string{};
  };
  return terms_hold(q.label_selector, label) && terms_hold(q.field_selector, field);
}

caf::error not_found(const std::string& plural, const std::string& name) {
  return make_error(ec::not_found, plural + " \"" + name + "\" not found");
}

/// A real server's check of a core/v1 Event without eventTime (docs/kubernetes-api.md,
/// "Events"): about a cluster-scoped object (no involvedObject.namespace) it lives in
/// "default"; about a namespaced one, in that object's namespace.
caf::error event_refused(const std::string& ns, const Document& d) {
  auto involved = d.FindMember("involvedObject");
  auto involved_ns = involved != d.MemberEnd() && involved->value.IsObject()
                       ? string_at(involved->value, "namespace")
                       : std::string{};
  bool ok = involved_ns.empty() ? ns == "default" : ns == involved_ns;
  if (ok) {
    return {};
  }
  return make_error(ec::invalid_argument, "Event is invalid: involvedObject.namespace: Invalid value: \""
                                            + involved_ns + "\": does not match event.namespace");
}

} // namespace

void memory_objects::set_hook(hook h) {
  std::lock_guard lock{mu_};
  hook_ = std::move(h);
}

std::optional<std::string> memory_objects::object(const std::string& plural,
                                                  const std::string& name) {
  std::lock_guard lock{mu_};
  auto& of_kind = objects_[plural];
  auto it = of_kind.find(name);
  return it == of_kind.end() ? std::nullopt : std::optional<std::string>{it->second};
}

std::vector<std::string> memory_objects::patches(const std::string& name,
                                                 const std::string& subresource) {
  std::lock_guard lock{mu_};
  return patches_[name + "/" + subresource];
}

int memory_objects::calls(const std::string& verb) {
  std::lock_guard lock{mu_};
  return calls_[verb];
}

uint64_t memory_objects::delivered_through() {
  std::lock_guard lock{mu_};
  return delivered_;
}

void memory_objects::erase_unseen(const std::string& plural, const std::string& name) {
  std::lock_guard lock{mu_};
  objects_[plural].erase(name);
}

void memory_objects::expire_watches() {
  std::lock_guard lock{mu_};
  expired_before_ = ++rv_;
  ++expiries_;
  changed_.notify_all();
}

caf::error memory_objects::before(object_call call) {
  hook h;
  {
    std::lock_guard lock{mu_};
    ++calls_[call.verb];
    if (cancelled_) {
      return make_error(ec::unavailable, "the calls were cancelled");
    }
    h = hook_;
  }
  return h ? h(call) : caf::error{};
}

std::string memory_objects::write_locked(const std::string& plural, const std::string& type,
                                         std::string json) {
  auto d = parse(json);
  set_string(d, metadata(d), "resourceVersion", std::to_string(++rv_));
  json = text(d);
  if (type == "DELETED") {
    objects_[plural].erase(string_at(metadata(d), "name"));
  } else {
    objects_[plural][string_at(metadata(d), "name")] = json;
  }
  history_.push_back({rv_, plural, type, json});
  changed_.notify_all();
  return json;
}

caf::expected<std::string> memory_objects::get_object(const kube::resource_ref& kind,
                                                      const std::string& name,
                                                      std::chrono::steady_clock::time_point) {
  if (auto err = before({"get", kind.plural, name, "", ""})) {
    return err;
  }
  auto found = object(kind.plural, name);
  if (!found) {
    return not_found(kind.plural, name);
  }
  return *found;
}

caf::expected<kube::object_page> memory_objects::list_objects(const kube::resource_ref& kind,
                                                              const kube::list_query& q,
                                                              std::chrono::steady_clock::time_point) {
  if (auto err = before({"list", kind.plural, "", "", ""})) {
    return err;
  }
  std::lock_guard lock{mu_};
  kube::object_page page;
  for (const auto& [name, json] : objects_[kind.plural]) {
    if (matches(json, q)) {
      page.items.push_back(json);
    }
  }
  page.resource_version = std::to_string(rv_);
  return page;
}

caf::expected<std::string> memory_objects::create_object(const kube::resource_ref& kind,
                                                         const std::string& json,
                                                         std::chrono::steady_clock::time_point) {
  if (auto err = before({"create", kind.plural, "", "", json})) {
    return err;
  }
  auto d = parse(json);
  if (kind.plural == "events") {
    if (auto err = event_refused(kind.ns, d)) {
      return err;
    }
  }
  d.RemoveMember("status"); // the status subresource: a create cannot set it
  auto& meta = metadata(d);
  auto name = string_at(meta, "name");
  std::lock_guard lock{mu_};
  if (objects_[kind.plural].count(name)) {
    return make_error(ec::already_exists, kind.plural + " \"" + name + "\" already exists");
  }
  set_string(d, meta, "uid", "uid-" + std::to_string(++uid_));
  meta.RemoveMember("generation");
  meta.AddMember("generation", 1, d.GetAllocator());
  return write_locked(kind.plural, "ADDED", text(d));
}

caf::expected<std::string> memory_objects::merge_patch(const kube::resource_ref& kind,
                                                       const std::string& name,
                                                       const std::string& subresource,
                                                       const std::string& patch,
                                                       std::chrono::steady_clock::time_point) {
  if (auto err = before({"patch", kind.plural, name, subresource, patch})) {
    return err;
  }
  std::lock_guard lock{mu_};
  auto it = objects_[kind.plural].find(name);
  if (it == objects_[kind.plural].end()) {
    return not_found(kind.plural, name);
  }
  auto old = parse(it->second);
  auto p = parse(patch);
  auto& pmeta = metadata(p);
  auto want_rv = string_at(pmeta, "resourceVersion");
  if (!want_rv.empty() && want_rv != string_at(metadata(old), "resourceVersion")) {
    return make_error(ec::aborted, "the object has been modified; please apply your changes to "
                                   "the latest version and try again");
  }
  pmeta.RemoveMember("resourceVersion");
  Document next;
  next.CopyFrom(old, next.GetAllocator());
  if (subresource == "status") {
    if (p.HasMember("status")) {
      Value only{rapidjson::kObjectType};
      only.AddMember("status", Value{p["status"], next.GetAllocator()}, next.GetAllocator());
      apply_merge(next, only, next.GetAllocator());
    }
  } else {
    p.RemoveMember("status");
    apply_merge(next, p, next.GetAllocator());
  }
  auto& old_meta = metadata(old);
  auto& meta = metadata(next);
  bool deleting = old_meta.HasMember("deletionTimestamp");
  if (deleting) {
    auto before_list = finalizers_of(old_meta);
    for (const auto& f : finalizers_of(meta)) {
      if (std::find(before_list.begin(), before_list.end(), f) == before_list.end()) {
        return make_error(ec::invalid_argument, "metadata.finalizers: Forbidden: no new "
                                                "finalizers can be added if the object is "
                                                "being deleted");
      }
    }
  }
  if (content_of(next) != content_of(old)) {
    auto generation = meta.HasMember("generation") ? meta["generation"].GetInt64() : 1;
    meta.RemoveMember("generation");
    meta.AddMember("generation", generation + 1, next.GetAllocator());
  }
  if (text(next) == text(old)) {
    return it->second; // nothing changed: no write, no event
  }
  patches_[name + "/" + subresource].push_back(patch);
  if (deleting && finalizers_of(meta).empty()) {
    return write_locked(kind.plural, "DELETED", text(next));
  }
  return write_locked(kind.plural, "MODIFIED", text(next));
}

caf::expected<std::string> memory_objects::delete_object(const kube::resource_ref& kind,
                                                         const std::string& name,
                                                         std::chrono::steady_clock::time_point) {
  if (auto err = before({"delete", kind.plural, name, "", ""})) {
    return err;
  }
  std::lock_guard lock{mu_};
  auto it = objects_[kind.plural].find(name);
  if (it == objects_[kind.plural].end()) {
    return not_found(kind.plural, name);
  }
  auto d = parse(it->second);
  auto& meta = metadata(d);
  if (meta.HasMember("deletionTimestamp")) {
    return it->second;
  }
  if (!finalizers_of(meta).empty()) {
    set_string(d, meta, "deletionTimestamp", "2026-12-03T00:00:00Z");
    return write_locked(kind.plural, "MODIFIED", text(d));
  }
  write_locked(kind.plural, "DELETED", text(d));
  return std::string{R"({"kind":"Status","apiVersion":"v1","status":"Success"})"};
}

caf::expected<kube::watch_end>
memory_objects::watch_objects(const kube::resource_ref& kind, const kube::list_query& q,
                              const std::string& resource_version,
                              const std::function<bool(const kube::object_event&)>& on_event,
                              std::chrono::steady_clock::time_point until) {
  if (auto err = before({"watch", kind.plural, "", "", resource_version})) {
    return err;
  }
  std::unique_lock lock{mu_};
  uint64_t from = resource_version.empty() ? rv_ : std::stoull(resource_version);
  if (from < expired_before_) {
    return kube::watch_end::gone;
  }
  auto expiries = expiries_;
  size_t next = 0;
  for (;;) {
    if (cancelled_) {
      return make_error(ec::unavailable, "the calls were cancelled");
    }
    if (expiries_ != expiries) {
      return kube::watch_end::gone;
    }
    for (; next < history_.size(); ++next) {
      auto ev = history_[next];
      if (ev.rv <= from || ev.plural != kind.plural || !matches(ev.object, q)) {
        continue;
      }
      lock.unlock();
      bool more = on_event({ev.type, ev.object, std::to_string(ev.rv)});
      lock.lock();
      delivered_ = std::max(delivered_, ev.rv);
      if (!more) {
        return kube::watch_end::stopped;
      }
    }
    // With a predicate: an expiry, a cancel or an event that came while on_event ran (the
    // lock released) notified no one, and must not be waited for.
    if (!changed_.wait_until(lock, until, [&] {
          return cancelled_ || expiries_ != expiries || next < history_.size();
        })) {
      return kube::watch_end::stopped;
    }
  }
}

void memory_objects::cancel_calls() {
  std::lock_guard lock{mu_};
  cancelled_ = true;
  changed_.notify_all();
}

} // namespace berth::test
