#!/usr/bin/env python3
"""Writes the journal target's seed corpus (tests/fuzz/corpus/journal/): journals framed
as persistence/journal_format.cpp frames them ([u32 length][u32 crc32][JSON], little
endian; zlib's crc32 is boost's crc_32_type), a torn one, and snapshots of both
versions and an older state.json. Run once; its output is checked in."""
import json
import os
import struct
import zlib

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "journal")


def frame(obj):
    payload = json.dumps(obj, separators=(",", ":")).encode()
    return struct.pack("<II", len(payload), zlib.crc32(payload)) + payload


docker = {"name": "v1", "backend": "local", "options": {"type": "tmpfs"},
          "created_at": "2026-01-01T00:00:00Z", "mounts": {"c1": 2},
          "mount_origins": {"c1": {"dockerd": "12@345", "last_mounted_ms": 1700000000000}},
          "mounted": True, "mountpoint": "/var/lib/berth/volumes/v1/mnt"}
csi = {"name": "pvc-1", "backend": "block", "options": {"fsType": "ext4"}, "kind": "volume",
       "owner": "csi", "capacity_bytes": 1048576, "staging_path": "/k/s", "staged_block": False,
       "stage_flags": ["noatime"], "device": "/dev/loop3",
       "published": {"/k/t": {"readonly": True, "block": False, "flags": [], "created": True}}}
header = frame({"op": "journal", "generation": 3})
seeds = {
    "journal_put_erase.bin": header + frame({"op": "put", "record": docker})
    + frame({"op": "put", "record": csi}) + frame({"op": "erase", "name": "v1"}),
    "journal_no_header.bin": frame({"op": "put", "record": docker}),
    "journal_torn.bin": (header + frame({"op": "put", "record": csi}))[:-5],
    "snapshot_v2.json": json.dumps({"version": 2, "generation": 3, "boot_id": "b-1",
                                    "volumes": [docker, csi]}).encode(),
    "snapshot_v1.json": json.dumps({"version": 1, "volumes": [docker]}).encode(),
    "legacy_state.json": json.dumps({"volumes": {"v1": {"options": {}, "mounts": ["a"]}}}).encode(),
}
os.makedirs(here, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(here, name), "wb") as f:
        f.write(data)
