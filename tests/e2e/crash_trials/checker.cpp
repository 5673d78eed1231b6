#include "tests/e2e/crash_trials/checker.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <rapidjson/document.h>

#include "backends/mountinfo.hpp"
#include "core/errors.hpp"
#include "core/record_json.hpp"
#include "tests/e2e/crash_trials/clients.hpp"

namespace berth::crash_trials {

namespace {

bool under(const std::string& path, const std::string& root) {
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0
         && path[root.size()] == '/';
}

/// One line of `losetup -J`.
struct loop_device {
  std::string name;
  std::string backing;
  bool autoclear = false;
};

/// `losetup -J`: every loop device, its backing file and its autoclear flag.
caf::expected<std::vector<loop_device>> loop_devices() {
  std::vector<loop_device> out;
  FILE* p = ::popen("losetup -J 2>&1", "r");
  if (p == nullptr) {
    return make_error(ec::internal, "cannot run losetup -J");
  }
  std::string text;
  char buf[4096];
  while (auto n = std::fread(buf, 1, sizeof buf, p)) {
    text.append(buf, n);
  }
  int rc = ::pclose(p);
  if (rc != 0) {
    return make_error(ec::internal, "losetup -J failed: " + text.substr(0, 300));
  }
  if (text.find_first_not_of(" \n") == std::string::npos) {
    return out; // no loop device at all: losetup prints nothing
  }
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("loopdevices")
      || !doc["loopdevices"].IsArray()) {
    return make_error(ec::internal, "losetup -J printed no list: " + text.substr(0, 300));
  }
  for (const auto& d : doc["loopdevices"].GetArray()) {
    if (d.HasMember("name") && d["name"].IsString() && d.HasMember("back-file")
        && d["back-file"].IsString()) {
      auto clear = d.FindMember("autoclear");
      out.push_back({d["name"].GetString(), d["back-file"].GetString(),
                     clear != d.MemberEnd() && clear->value.IsBool() && clear->value.GetBool()});
    }
  }
  return out;
}

/// "pid N (COMM)" of each process with `device` open, from /proc/*/fd.
std::string holders_of(const std::string& device) {
  std::string out;
  std::error_code err;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", err)) {
    auto pid = proc.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::error_code fd_err;
    for (const auto& fd : std::filesystem::directory_iterator(proc.path() / "fd", fd_err)) {
      std::error_code link_err;
      if (std::filesystem::read_symlink(fd.path(), link_err).string() == device) {
        std::ifstream comm(proc.path() / "comm");
        std::string name;
        std::getline(comm, name);
        out += (out.empty() ? "" : ", ") + ("pid " + pid + " (" + name + ")");
        break;
      }
    }
  }
  return out.empty() ? "no process" : out;
}

docker_view docker_of(const volume_record* rec) {
  docker_view v;
  if (rec != nullptr) {
    v.exists = true;
    v.counts = rec->mounts;
  }
  return v;
}

csi_view csi_of(const volume_record* rec) {
  csi_view v;
  if (rec != nullptr) {
    v.exists = true;
    v.capacity = rec->capacity_bytes;
    v.staged = !rec->staging_path.empty();
    for (const auto& [target, pub] : rec->published) {
      v.targets.insert(target);
    }
    if (auto it = rec->mutable_parameters.find("readAheadKB");
        it != rec->mutable_parameters.end()) {
      v.read_ahead = it->second;
    }
  }
  return v;
}

const volume_record* find(const observed& seen, const std::string& name) {
  for (const auto& r : seen.records) {
    if (r.name == name) {
      return &r;
    }
  }
  return nullptr;
}

template <class View>
void compare_slot(const slot<View>& s, const View& has, const char* kind,
                  std::vector<std::string>& out) {
  if (has == s.known || (s.maybe && has == *s.maybe)) {
    return;
  }
  auto line = std::string(kind) + " volume " + s.name + ": berthd has " + describe(has)
              + ", the answered requests made " + describe(s.known);
  if (s.maybe) {
    line += " (with the one in flight at the kill: " + describe(*s.maybe) + ")";
  }
  out.push_back(line);
}

} // namespace

std::string describe(const docker_view& v) {
  if (!v.exists) {
    return "{no record}";
  }
  std::string out = "{counts";
  for (const auto& [id, n] : v.counts) {
    out += " " + id + "=" + std::to_string(n);
  }
  return out + (v.counts.empty() ? " none}" : "}");
}

std::string describe(const csi_view& v) {
  if (!v.exists) {
    return "{no record}";
  }
  std::string out = "{" + std::to_string(v.capacity >> 20) + " MiB";
  out += v.staged ? ", staged" : ", not staged";
  for (const auto& t : v.targets) {
    out += ", published at " + t;
  }
  if (!v.read_ahead.empty()) {
    out += ", readAheadKB=" + v.read_ahead;
  }
  return out + "}";
}

std::string wait_deferred_detaches(const std::string& root) {
  auto began = std::chrono::steady_clock::now();
  std::map<std::string, std::string> pending; // device → who held it when first seen
  for (;;) {
    auto loops = loop_devices();
    if (!loops) {
      return "";
    }
    bool left = false;
    for (const auto& d : *loops) {
      if (d.autoclear && under(d.backing, root)) {
        left = true;
        if (pending.count(d.name) == 0) {
          pending[d.name] = holders_of(d.name);
        }
      }
    }
    auto waited = std::chrono::steady_clock::now() - began;
    if (!left || waited > std::chrono::seconds(60)) {
      if (pending.empty()) {
        return "";
      }
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited).count();
      std::string line = std::string(left ? "still" : "") + (left ? " " : "") + "waited "
                         + std::to_string(ms) + " ms for the deferred detach of";
      for (const auto& [dev, who] : pending) {
        line += " " + dev + " (held by " + who + ")";
      }
      return line;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

caf::expected<observed> observe(const std::string& admin_socket, const std::string& root) {
  observed seen;
  admin_client admin{admin_socket};
  auto list = admin.get("/v1/volumes");
  if (!list.done()) {
    return make_error(ec::unavailable, "GET /v1/volumes: " + list.detail);
  }
  auto records = records_from_json(list.detail);
  if (!records) {
    return records.error();
  }
  seen.records = std::move(*records);
  auto mounts = read_mountinfo();
  if (!mounts) {
    return mounts.error();
  }
  for (const auto& m : *mounts) {
    if (under(m.mount_point, root)) {
      seen.mount_points.push_back(m.mount_point);
    }
  }
  auto loops = loop_devices();
  if (!loops) {
    return loops.error();
  }
  for (auto& d : *loops) {
    if (under(d.backing, root)) {
      seen.loops.emplace_back(d.name, d.backing);
    }
  }
  return seen;
}

std::vector<std::string> compare(const trial_model& model, const observed& seen) {
  std::vector<std::string> out;
  std::set<std::string> known_names;
  for (const auto& mine : model.docker) {
    for (const auto& s : mine) {
      known_names.insert(s.name);
      compare_slot(s, docker_of(find(seen, s.name)), "Docker", out);
    }
  }
  for (const auto& mine : model.csi) {
    for (const auto& s : mine) {
      known_names.insert(s.name);
      compare_slot(s, csi_of(find(seen, s.name)), "CSI", out);
    }
  }
  for (const auto& [name, ids] : model.shared.volumes) {
    known_names.insert(name);
    auto* rec = find(seen, name);
    if (rec == nullptr) {
      out.push_back("shared volume " + name + ": its record is gone");
      continue;
    }
    for (const auto& [id, c] : ids) {
      auto it = rec->mounts.find(id);
      uint64_t has = it == rec->mounts.end() ? 0 : it->second;
      if (has < c.lowest() || has > c.highest()) {
        out.push_back("shared volume " + name + " mount ID " + id + ": count " + std::to_string(has)
                      + ", the answered requests allow " + std::to_string(c.lowest()) + " to "
                      + std::to_string(c.highest()) + " (base " + std::to_string(c.base) + ", +"
                      + std::to_string(c.acked_mounts) + " -" + std::to_string(c.acked_unmounts)
                      + " answered, " + std::to_string(c.pending_mounts) + " Mount(s) and "
                      + std::to_string(c.pending_unmounts) + " Unmount(s) in flight)");
      }
    }
  }
  const auto& pubs = model.publications;
  known_names.insert(pubs.volume);
  if (auto* rec = find(seen, pubs.volume); rec == nullptr || rec->staging_path.empty()) {
    out.push_back("shared CSI volume " + pubs.volume + ": "
                  + (rec == nullptr ? "its record is gone" : "not staged any more"));
  } else {
    auto published = [rec](const std::string& name) {
      for (const auto& [target, how] : rec->published) {
        auto tail = shared_targets_dir + name;
        if (target.size() > tail.size()
            && target.compare(target.size() - tail.size(), tail.size(), tail) == 0) {
          return true;
        }
      }
      return false;
    };
    for (const auto& mine : pubs.targets) {
      for (const auto& s : mine) {
        bool has = published(s.name);
        if (has != s.known && !(s.maybe && has == *s.maybe)) {
          auto state = [](bool p) { return p ? "published" : "not published"; };
          out.push_back("shared CSI volume " + pubs.volume + " target " + s.name + ": " + state(has)
                        + ", the answered requests made it " + state(s.known)
                        + (s.maybe ? " (the one in flight at the kill would make it "
                               + std::string{state(*s.maybe)} + ")"
                                   : std::string{}));
        }
      }
    }
  }
  // The host: what the records hold must be there, and nothing else.
  std::map<std::string, std::string> held; // mount point → whose
  std::map<std::string, std::string> devices; // loop device → whose
  for (const auto& r : seen.records) {
    if (known_names.count(r.name) == 0) {
      out.push_back("record " + r.name + ": no request of the trial made it");
    }
    if (r.mounted != (total_mounts(r) > 0)) {
      out.push_back("record " + r.name + ": mounted=" + (r.mounted ? "true" : "false") + " with "
                    + std::to_string(total_mounts(r)) + " count(s)");
    }
    if (r.mounted) {
      held[r.mountpoint] = r.name + "'s host mount";
    }
    if (!r.staging_path.empty()) {
      if (!r.staged_block) {
        held[r.staging_path] = r.name + "'s staging";
      }
      if (r.device.empty()) {
        out.push_back("record " + r.name + ": staged without a loop device");
      } else {
        devices[r.device] = r.name;
      }
    }
    for (const auto& [target, pub] : r.published) {
      held[target] = r.name + "'s publication";
    }
  }
  std::map<std::string, int> mounted; // a point mounted twice is a mount nobody holds
  for (const auto& p : seen.mount_points) {
    ++mounted[p];
  }
  for (const auto& [p, times] : mounted) {
    if (held.count(p) == 0) {
      out.push_back("mounted without a record: " + p);
    } else if (times > 1) {
      out.push_back(held[p] + " is mounted " + std::to_string(times) + " times: " + p);
    }
  }
  for (const auto& [p, whose] : held) {
    if (mounted.count(p) == 0) {
      out.push_back(whose + " is not mounted: " + p);
    }
  }
  std::set<std::string> attached;
  for (const auto& [dev, file] : seen.loops) {
    attached.insert(dev);
    if (devices.count(dev) == 0) {
      out.push_back("loop device without a record: " + dev + " (" + file + ")");
    }
  }
  for (const auto& [dev, whose] : devices) {
    if (attached.count(dev) == 0) {
      out.push_back("record " + whose + ": its loop device " + dev
                    + " is not attached to an image of the trial");
    }
  }
  return out;
}

} // namespace berth::crash_trials
