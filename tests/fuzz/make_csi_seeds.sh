#!/usr/bin/env bash
# Writes the seed corpus of the csi_requests fuzz target (corpus/csi_requests/): real
# requests in protobuf text format, encoded by protoc against berth's csi.proto, each
# after the byte that picks its message in csi_requests_fuzz.cpp (0 CreateVolume,
# 1 NodeStageVolume, 2 NodePublishVolume, 3 ControllerExpandVolume, 4 NodeExpandVolume,
# 5 ControllerModifyVolume, 6 CreateSnapshot, 7 mount flags alone, one per line).
#
#   tests/fuzz/make_csi_seeds.sh        (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus/csi_requests
mkdir -p "$out"

# seed NAME SELECTOR MESSAGE TEXT
seed() {
  { printf "\\x$(printf %02x "$2")"
    printf '%s\n' "$4" | protoc -I protocols/csi --encode="csi.v1.$3" protocols/csi/csi.proto
  } >"$out/$1.bin"
}

kd=/tmp/berth-fuzz-kubelet # the kubelet dir of the target
mount_cap='volume_capability { mount { fs_type: "ext4" mount_flags: "noatime" mount_flags: "errors=remount-ro" } access_mode { mode: SINGLE_NODE_WRITER } }'

seed create 0 CreateVolumeRequest '
name: "pvc-5a1c"
capacity_range { required_bytes: 1073741824 limit_bytes: 2147483648 }
volume_capabilities { mount { fs_type: "xfs" mount_flags: "discard" } access_mode { mode: SINGLE_NODE_WRITER } }
parameters { key: "backend" value: "block" }
parameters { key: "csi.storage.k8s.io/pvc/name" value: "data" }
mutable_parameters { key: "readAheadKB" value: "256" }
accessibility_requirements { requisite { segments { key: "topology.berth.csi.dev/node" value: "n1" } } }'
seed create_from_snapshot 0 CreateVolumeRequest '
name: "restored"
volume_capabilities { block { } access_mode { mode: SINGLE_NODE_SINGLE_WRITER } }
volume_content_source { snapshot { snapshot_id: "snap-1" } }'
seed create_local 0 CreateVolumeRequest '
name: "scratch"
volume_capabilities { mount { } access_mode { mode: SINGLE_NODE_MULTI_WRITER } }
parameters { key: "backend" value: "local" }'
seed stage 1 NodeStageVolumeRequest "
volume_id: \"pvc-5a1c\"
staging_target_path: \"$kd/plugins/kubernetes.io/csi/berth.csi.dev/abc/globalmount\"
$mount_cap"
seed stage_escape 1 NodeStageVolumeRequest "
volume_id: \"v1\"
staging_target_path: \"$kd/escape/etc/stage\"
$mount_cap"
seed publish 2 NodePublishVolumeRequest "
volume_id: \"pvc-5a1c\"
staging_target_path: \"$kd/plugins/kubernetes.io/csi/berth.csi.dev/abc/globalmount\"
target_path: \"$kd/pods/uid-1/volumes/kubernetes.io~csi/pvc-5a1c/mount\"
readonly: true
volume_capability { mount { mount_flags: \"nodev\" mount_flags: \"nosuid\" } access_mode { mode: SINGLE_NODE_READER_ONLY } }"
seed publish_block 2 NodePublishVolumeRequest "
volume_id: \"raw\"
staging_target_path: \"$kd/plugins/kubernetes.io/csi/volumeDevices/staging/raw\"
target_path: \"$kd/plugins/kubernetes.io/csi/volumeDevices/publish/raw/uid-2\"
volume_capability { block { } access_mode { mode: SINGLE_NODE_WRITER } }"
seed controller_expand 3 ControllerExpandVolumeRequest '
volume_id: "pvc-5a1c"
capacity_range { required_bytes: 4294967296 }
volume_capability { mount { fs_type: "xfs" } access_mode { mode: SINGLE_NODE_WRITER } }'
seed node_expand 4 NodeExpandVolumeRequest "
volume_id: \"pvc-5a1c\"
volume_path: \"$kd/pods/uid-1/volumes/kubernetes.io~csi/pvc-5a1c/mount\"
staging_target_path: \"$kd/plugins/kubernetes.io/csi/berth.csi.dev/abc/globalmount\"
capacity_range { required_bytes: 4294967296 }"
seed modify 5 ControllerModifyVolumeRequest '
volume_id: "pvc-5a1c"
mutable_parameters { key: "readAheadKB" value: "512" }
mutable_parameters { key: "directIO" value: "true" }'
seed snapshot 6 CreateSnapshotRequest '
source_volume_id: "pvc-5a1c"
name: "snap-1"
parameters { key: "backend" value: "block" }'
printf '\x07noatime\nnodev,nosuid\ndata=ordered\ncommit=5s\n-oremount\nro,bind\n' >"$out/flags.bin"
