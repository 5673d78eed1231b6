#pragma once

// berthd's node agent in the cluster mode (`berthd --kubernetes`): it lists and watches the
// BerthVolumes of its node (a label selector; again after 410 Expired, with backoff while
// the API is away), carries each out through the volume actors (create, expand and modify,
// remove), and answers in the object's status; it reports the free capacity of each
// backend in its Node's annotations when it changed enough, at most once a few seconds,
// and at every resync (capacity_report.hpp). After each full LIST it
// reports the CSI volumes recorded here that no BerthVolume names (log, metric, berthctl
// unclaimed), and removes one only when an operator asks (unclaimed_desk). Its
// BerthSnapshots are carried out beside, over the same API (snapshot_agent.hpp).
//
//   API server ─watch─▶ watcher thread ─▶ queue ─▶ workers ─▶ volume_desk ─▶ registry
//        ▲                                              │
//        └──────── status, finalizer, capacity ◀────────┘
//
// Workers run a volume's create and removal one at a time, but send its changes as they
// come: an expand and a modify that arrive together reach the volume's coalescing
// mailbox together, and it makes them one backend call (docs/design.md, "Expand and
// modify coalesce into one call").

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>

#include "actors/actors.hpp"
#include "backends/backend.hpp"
#include "core/telemetry/telemetry.hpp"
#include "core/unclaimed_desk.hpp"
#include "protocols/kube/agent/capacity_report.hpp"
#include "protocols/kube/agent/snapshot_agent.hpp"
#include "protocols/kube/agent/volume_desk.hpp"
#include "protocols/kube/agent/volume_intent.hpp"
#include "protocols/kube/berth_objects.hpp"
#include "protocols/kube/object_api.hpp"

namespace berth::kube::agent {

struct agent_config {
  std::string node; ///< this node's name: the Node object, and each volume's spec.nodeName
  std::string default_backend = "block";
  /// The backends whose free capacity the Node's annotations report.
  std::map<std::string, std::shared_ptr<backend>> backends;
  /// Every volume is looked at again, and capacity reported, this often.
  std::chrono::seconds resync{60};
  /// When a change of capacity is written between resyncs; it is measured again every
  /// capacity.interval, so a change held back by the interval is written at the next one.
  capacity_rule capacity;
  size_t workers = 4;
  /// Where the unclaimed volumes are counted (berth_unclaimed_volumes); may be null.
  std::shared_ptr<telemetry> stats;
};

class node_agent : public unclaimed_desk {
public:
  node_agent(caf::actor_system& sys, registry_actor registry, std::unique_ptr<object_api> api,
             agent_config cfg);
  ~node_agent() override;

  node_agent(const node_agent&) = delete;
  node_agent& operator=(const node_agent&) = delete;

  /// Starts the threads. Call once the volumes were spawned.
  void start();

  /// Ends every call to the API in progress and joins the threads; the transitions a
  /// worker waits for finish first. Idempotent.
  void stop();

  /// How many objects the agent keeps track of now: each BerthVolume and BerthSnapshot
  /// listed or watched, until it is gone from the API and nothing of it runs.
  size_t objects_tracked();

  // -- unclaimed_desk ----------------------------------------------------------------------
  caf::expected<unclaimed_volumes> unclaimed() override;
  /// Runs on a worker; a removal queued when the agent stops is answered ec::unavailable.
  void remove_unclaimed(std::string name, removed_fn done) override;

private:
  /// What the agent knows of one volume.
  struct tracked {
    std::optional<volume_object> latest; ///< the object as last seen; nullopt once gone
    std::string uid;                     ///< the uid of the object all below is about
    bool local_known = false;            ///< whether its record was looked up (or made)
    bool lost = false;                   ///< reported ready once, no record here now
    bool busy = false;                   ///< a create or a removal is running
    bool queued = false;
    requested asked;                     ///< what the volume's actor was last asked for
    int64_t status_generation = 0;       ///< the newest generation a status answered
    /// Held across one status write, its check and its call: the workers write one
    /// object's status one at a time.
    std::shared_ptr<std::mutex> status_writes = std::make_shared<std::mutex>();
  };

  void watch_loop();
  void worker_loop();
  void ticker_loop();

  /// Takes in the object as seen; queues it when it changed.
  void seen(volume_object obj);
  /// Forgets each object a whole LIST lacks: it went while no watch ran.
  void forget_unseen(const std::vector<std::string>& names);
  void enqueue_locked(const std::string& name, tracked& t);

  void handle(const std::string& name);
  void handle_removal(const std::string& name, const volume_object& obj);
  void handle_first_look(const std::string& name, const volume_object& obj);
  void handle_change(const std::string& name, const volume_object& obj, modify_request change);
  /// Ends the create's or removal's turn that `handled` began: clears `busy`, and queues the
  /// object again when it changed meanwhile. Needs mu_.
  void end_turn_locked(const std::string& name, const volume_object& handled);

  /// Writes `status` of `obj` unless a newer generation was answered already, or the
  /// object under its name is another one now.
  void write_status(const volume_object& obj, const volume_object_status& status);
  void drop_finalizer(const volume_object& obj);
  /// Measures the backends' free capacity, and writes it when capacity_ says it is due.
  void report_capacity(bool force);
  /// After a full LIST: the CSI volumes of this node's state that no BerthVolume names
  /// become the unclaimed ones; each newly unclaimed one is logged.
  void report_unclaimed(const std::vector<std::string>& names_seen);
  /// A volume an object names now is claimed. Needs mu_.
  void claim_locked(const std::string& csi_name);
  /// Takes `csi_name` off the unclaimed list; false when it was not on it. Needs mu_.
  bool drop_unclaimed_locked(const std::string& csi_name);
  /// Sets berth_unclaimed_volumes to the unclaimed volumes and snapshots. Needs mu_.
  void count_unclaimed_locked();
  /// The removal an operator asked for, on a worker.
  caf::error remove_unclaimed_now(const std::string& name);
  caf::error remove_unclaimed_snapshot(const std::string& name);
  /// At stop, after the workers ended: answers each removal still queued ec::unavailable.
  void refuse_removals_left();

  volume_desk desk_;
  std::unique_ptr<object_api> api_;
  agent_config cfg_;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> queue_;
  /// An operator's removal of an unclaimed volume, waiting for a worker.
  struct removal {
    std::string name;
    removed_fn done;
  };
  std::deque<removal> removals_; ///< taken before queue_
  std::map<std::string, tracked> volumes_; ///< by object name
  bool stopping_ = false;
  std::optional<unclaimed_volumes> unclaimed_; ///< nullopt before the first full LIST

  std::mutex capacity_mu_;
  capacity_report capacity_; ///< under capacity_mu_
  bool capacity_failing_ = false; ///< the last write failed (logged once until one succeeds)

  std::vector<std::thread> threads_;
  snapshot_agent snapshots_; ///< after api_ and cfg_, which it is made from
};

} // namespace berth::kube::agent
