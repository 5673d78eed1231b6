#pragma once

// The node agent's BerthSnapshots: it lists and watches those of its node (the same label
// selector as its BerthVolumes), cuts each through the registry as CreateSnapshot does on
// one node, and answers in the object's status; an object being deleted has its snapshot
// removed, then its storage finalizer released. One worker: snapshots are few, and each
// waits on its volume's actor anyway.
//
//   API server ─watch─▶ watcher thread ─▶ queue ─▶ worker ─▶ volume_desk ─▶ registry
//        ▲                                           │
//        └────────────── status, finalizer ◀─────────┘
//
// A snapshot that is Ready in its status but has no record here is reported lost
// (Failed), never cut again: a new copy of the volume as it is now would not be the
// snapshot the status promised.

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "protocols/kube/agent/volume_desk.hpp"
#include "protocols/kube/object_api.hpp"
#include "protocols/kube/snapshot_objects.hpp"

namespace berth::kube::agent {

class snapshot_agent {
public:
  /// `api` is the node agent's, and outlives this. `stored` runs after each snapshot cut
  /// or removed here (the node agent reports its capacity then).
  snapshot_agent(caf::actor_system& sys, registry_actor registry, object_api& api,
                 std::string node, std::string default_backend, std::function<void()> stored);
  ~snapshot_agent();

  snapshot_agent(const snapshot_agent&) = delete;
  snapshot_agent& operator=(const snapshot_agent&) = delete;

  void start();
  /// Asks the threads to end; the caller then cancels the API's calls and calls join().
  void begin_stop();
  void join();

  /// How many objects it keeps track of now.
  size_t objects_tracked();

private:
  struct tracked {
    std::optional<snapshot_object> latest; ///< nullopt once gone
    bool queued = false;
  };

  void watch_loop();
  void worker_loop();
  std::string seen(snapshot_object obj);
  void forget_unseen(const std::vector<std::string>& names);
  void enqueue_locked(const std::string& name, tracked& t);
  bool stopping();

  void handle(const std::string& name);
  void handle_removal(const snapshot_object& obj);
  void handle_cut(const snapshot_object& obj);
  /// Writes `status` unless the object under its name is another one now.
  void write_status(const snapshot_object& obj, const snapshot_object_status& status);

  volume_desk desk_;
  object_api& api_;
  std::string node_;
  std::string default_backend_;
  std::function<void()> stored_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  std::map<std::string, tracked> snapshots_; ///< by object name
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

} // namespace berth::kube::agent
