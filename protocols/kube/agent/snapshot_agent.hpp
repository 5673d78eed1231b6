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
// snapshot the status promised. A CSI snapshot recorded here that no BerthSnapshot names
// is unclaimed: reported after each full LIST and kept (snapshot_agent_unclaimed.cpp), as
// the node agent keeps an unclaimed volume.

#include <chrono>
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
  /// What the node agent hears of: `stored` after each snapshot cut or removed here (it
  /// reports its capacity then), `unclaimed_changed` when the unclaimed ones changed.
  /// Neither runs under this agent's lock.
  struct callbacks {
    std::function<void()> stored;
    std::function<void()> unclaimed_changed;
  };

  /// `api` is the node agent's, and outlives this.
  /// Every object is looked at again each `resync`: a status write or a finalizer release
  /// that failed is tried again then, as the node agent's ticker does for volumes.
  snapshot_agent(caf::actor_system& sys, registry_actor registry, object_api& api,
                 std::string node, std::string default_backend, std::chrono::seconds resync,
                 callbacks tell);
  ~snapshot_agent();

  snapshot_agent(const snapshot_agent&) = delete;
  snapshot_agent& operator=(const snapshot_agent&) = delete;

  void start();
  /// Asks the threads to end; the caller then cancels the API's calls and calls join().
  void begin_stop();
  void join();

  /// How many objects it keeps track of now.
  size_t objects_tracked();

  /// The CSI snapshots recorded here that no BerthSnapshot names, sorted; nullopt before
  /// the first full LIST.
  std::optional<std::vector<std::string>> unclaimed();

  /// The BerthSnapshot this agent knows that names the CSI snapshot `csi_name` ("" for none).
  std::string claimed_by(const std::string& csi_name);

  /// Takes `csi_name` off the unclaimed list (an operator removed it).
  void forget_unclaimed(const std::string& csi_name);

private:
  struct tracked {
    std::optional<snapshot_object> latest; ///< nullopt once gone
    bool queued = false;
  };

  void watch_loop();
  void worker_loop();
  void ticker_loop();
  std::string seen(snapshot_object obj);
  void forget_unseen(const std::vector<std::string>& names);
  void enqueue_locked(const std::string& name, tracked& t);
  bool stopping();
  /// After a full LIST: the CSI snapshots here that no listed object names.
  void report_unclaimed(const std::vector<std::string>& names_seen);
  /// Takes `csi_name` off the unclaimed list; true when it was on it. Needs mu_.
  bool drop_unclaimed_locked(const std::string& csi_name);

  void handle(const std::string& name);
  void handle_removal(const snapshot_object& obj);
  void handle_cut(const snapshot_object& obj);
  /// Writes `status` unless the object under its name is another one now.
  void write_status(const snapshot_object& obj, const snapshot_object_status& status);

  volume_desk desk_;
  object_api& api_;
  std::string node_;
  std::string default_backend_;
  std::chrono::seconds resync_;
  callbacks tell_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  std::map<std::string, tracked> snapshots_; ///< by object name
  bool stopping_ = false;
  std::optional<std::vector<std::string>> unclaimed_;
  std::vector<std::thread> threads_;
};

} // namespace berth::kube::agent
