#!/usr/bin/env bash
# End to end against a real dockerd: berthd serves a private dockerd as a volume
# plugin; every case is checked on the host (/proc/self/mountinfo) and through berthctl.
#
#   usage: docker_e2e.sh PATH/TO/berthd PATH/TO/berthctl
#
# (a) create does not mount                       (e) berthd restarts: between Unmount and
# (b) write in one container, read in the next        Remove, and under a running container
# (c) docker cp in/out of a running container     (f) -o type=tmpfs -o device=tmpfs
#     keeps the volume mounted                    (g) rm of a volume in use is refused
# (d) two containers share a volume               (h) bad option, ls, inspect Status
# (a), (b), (d), (g): docs/design.md, "Mount at the first Mount, unmount at the last";
# (c): docs/design.md, "One count per mount ID".
# Exit 77 (skipped, loudly) when root, docker.io or a working dockerd is missing.

source "$(dirname "$0")/lib.sh"

e2e_init "${1:-}" "${2:-}"
need_cmd tar tar
start_dockerd_and_berthd

# run_rm VOLUME CMD: a throw-away container with VOLUME at /data.
run_rm() {
  dk run --rm --network none -v "$1:/data" "$IMG" sh -c "$2"
}

# run_bg NAME VOLUME: a long-running container with VOLUME at /data.
run_bg() {
  dk run -d --network none --name "$1" -v "$2:/data" "$IMG" sleep 300
}

stop_rm() {
  dk stop -t 1 "$1" >/dev/null && dk rm "$1" >/dev/null
}

# -- (a) create does not mount -------------------------------------------------------
log "(a) docker volume create"
check_ok "(a) docker volume create -d $DRIVER v1" dk volume create -d "$DRIVER" v1
check "(a) v1 not mounted on the host after Create" 0 "$(mount_count "$(vol_mnt v1)")"
check "(a) berthctl: v1 not mounted" false "$(ctl_mounted v1)"
check "(a) berthctl: v1 has no mount IDs" 0 "$(ctl_total v1)"

# -- (b) data survives from one container to the next ------------------------------
log "(b) write in one container, read in the next"
check_ok "(b) a container writes /data/f" run_rm v1 'echo hello > /data/f'
check_unmounted "(b) after the writer exits" v1
check "(b) berthctl: v1 has no mount IDs after the writer" 0 "$(ctl_total v1)"
check "(b) the next container reads the data" hello "$(run_rm v1 'cat /data/f' 2>&1)"
check_unmounted "(b) after the reader exits" v1
check "(b) the data is in the volume's storage on the host" hello "$(cat "$STATE/volumes/v1/data/f" 2>&1)"

# -- (c) docker cp into and out of a running container (one count per mount ID) ------
log "(c) docker cp with a running container"
check_ok "(c) docker volume create v2" dk volume create -d "$DRIVER" v2
check_ok "(c) a long-running container c2 uses v2" run_bg c2 v2
check_mounted "(c) while c2 runs" v2
before=$(ctl_mounts v2)
check "(c) berthctl: one mount ID with count 1 while c2 runs" "1" "$(ctl_total v2)"
echo "copied in" >"$E2E_TMP/in.txt"
# The premise of this case: dockerd sends a second Mount with the container's own ID
# for docker cp (count 2), then its Unmount. berthd logs both; count them.
repeated_mounts() {
  grep -c "volume v2 mount counted (id .*, count 2)" "$BERTHD_LOG" 2>/dev/null || true
}
repeats_before=$(repeated_mounts)
check_ok "(c) docker cp a file into the running container" dk cp "$E2E_TMP/in.txt" c2:/data/in.txt
check "(c) dockerd sent the repeated Mount (same ID, count 2) for docker cp in" 1 \
  "$(( $(repeated_mounts) > repeats_before ? 1 : 0 ))"
check_mounted "(c) after docker cp in" v2
check_ok "(c) c2 writes a file" dk exec c2 sh -c 'echo from-c2 > /data/out.txt'
repeats_before=$(repeated_mounts)
check_ok "(c) docker cp a file out of the running container" dk cp c2:/data/out.txt "$E2E_TMP/out.txt"
check "(c) dockerd sent the repeated Mount (same ID, count 2) for docker cp out" 1 \
  "$(( $(repeated_mounts) > repeats_before ? 1 : 0 ))"
check "(c) the copied-out file has the data" from-c2 "$(cat "$E2E_TMP/out.txt" 2>&1)"
sleep 0.5
check "(c) v2 STILL mounted on the host after docker cp in and out" 1 "$(mount_count "$(vol_mnt v2)")"
check "(c) c2 still sees the copied-in file" "copied in" "$(dk exec c2 cat /data/in.txt 2>&1)"
check "(c) c2's /data is still the volume (host sees c2's writes)" from-c2 \
  "$(cat "$(vol_mnt v2)/out.txt" 2>&1)"
check "(c) berthctl: the same mount ID, count 1, after docker cp" "$before" "$(ctl_mounts v2)"
check "(c) berthctl: v2 mounted" true "$(ctl_mounted v2)"
check_ok "(c) docker stop c2" stop_rm c2
check_unmounted "(c) after c2 stops" v2
check "(c) berthctl: v2 has no mount IDs after stop" 0 "$(ctl_total v2)"

# -- (d) two containers share a volume ----------------------------------------------
log "(d) two containers share v3"
check_ok "(d) docker volume create v3" dk volume create -d "$DRIVER" v3
check_ok "(d) container d1 uses v3" run_bg d1 v3
check_ok "(d) container d2 uses v3" run_bg d2 v3
check_mounted "(d) while d1 and d2 run" v3
check "(d) one host mount for two containers" 1 "$(mount_count "$(vol_mnt v3)")"
check "(d) berthctl: two mount IDs" 2 "$(ctl_total v3)"
check_ok "(d) d1 writes, d2 reads: write" dk exec d1 sh -c 'echo shared > /data/s'
check "(d) d1 writes, d2 reads: read" shared "$(dk exec d2 cat /data/s 2>&1)"
check_ok "(d) docker stop d1" stop_rm d1
sleep 0.5
check "(d) v3 still mounted after the first container stops" 1 "$(mount_count "$(vol_mnt v3)")"
check "(d) d2 still reads the volume" shared "$(dk exec d2 cat /data/s 2>&1)"
check "(d) berthctl: one mount ID left" 1 "$(ctl_total v3)"
check_ok "(d) docker stop d2" stop_rm d2
check_unmounted "(d) after the second container stops" v3

# -- (e) berthd restarts --------------------------------------------------------------
log "(e) berthd restart between Unmount and Remove"
check_ok "(e) docker volume create v4" dk volume create -d "$DRIVER" v4
check_ok "(e) a container writes to v4" run_rm v4 'echo four > /data/f'
check_unmounted "(e) after the container" v4
check_ok "(e) berthd restarts (SIGTERM, start)" restart_berthd
check "(e) v4 still known after the restart" v4 "$(dk volume inspect -f '{{.Name}}' v4 2>&1)"
check_ok "(e) docker volume rm v4 after the restart" dk volume rm v4
check "(e) STATE/volumes/v4 is gone" absent "$( [[ -e "$STATE/volumes/v4" ]] && echo present || echo absent)"

log "(e) berthd restart under a running container"
check_ok "(e) docker volume create v4b" dk volume create -d "$DRIVER" v4b
check_ok "(e) container e1 uses v4b" run_bg e1 v4b
check_mounted "(e) while e1 runs" v4b
ids_before=$(ctl_mounts v4b)
check_ok "(e) berthd restarts while e1 runs" restart_berthd
check "(e) v4b still mounted right after the restart" 1 "$(mount_count "$(vol_mnt v4b)")"
check "(e) berthctl: mount-ID counts survived the restart" "$ids_before" "$(ctl_mounts v4b)"
check_ok "(e) e1 still writes to v4b" dk exec e1 sh -c 'echo after-restart > /data/r'
check "(e) the write reached the host volume" after-restart "$(cat "$(vol_mnt v4b)/r" 2>&1)"
kill9_berthd
if start_berthd "$STATE" "$PLUGIN_SOCK" "$ADMIN_SOCK"; then
  pass "(e) berthd starts after kill -9"
else
  fail "(e) berthd starts after kill -9" "see the log above"
fi
check "(e) v4b still mounted after kill -9 and start" 1 "$(mount_count "$(vol_mnt v4b)")"
check "(e) berthctl: counts survived kill -9" "$ids_before" "$(ctl_mounts v4b)"
check_ok "(e) docker stop e1" stop_rm e1
check_unmounted "(e) after e1 stops (the restarted berthd unmounts)" v4b
check_ok "(e) docker volume rm v4b" dk volume rm v4b

# -- (f) tmpfs through -o type/device ---------------------------------------------------
log "(f) -o type=tmpfs -o device=tmpfs"
check_ok "(f) docker volume create v5 with type=tmpfs" \
  dk volume create -d "$DRIVER" -o type=tmpfs -o device=tmpfs v5
check "(f) v5 not mounted after Create" 0 "$(mount_count "$(vol_mnt v5)")"
check_ok "(f) container f1 writes to v5" \
  dk run -d --network none --name f1 -v v5:/data "$IMG" sh -c 'echo tmp > /data/t; sleep 300'
check_mounted "(f) while f1 runs" v5
check "(f) the host mount is tmpfs" tmpfs "$(mount_fstype "$(vol_mnt v5)")"
wait_until 10 test -s "$(vol_mnt v5)/t"
check "(f) f1's write is in the tmpfs on the host" tmp "$(cat "$(vol_mnt v5)/t" 2>&1)"
check "(f) the write did not go to the plain data directory" absent \
  "$( [[ -e "$STATE/volumes/v5/data/t" ]] && echo present || echo absent)"
check_ok "(f) docker stop f1" stop_rm f1
check_unmounted "(f) after f1 stops" v5
check_ok "(f) docker volume rm v5" dk volume rm v5

# -- (i) the owner and mode of a new volume's root ------------------------------------------
log "(i) -o uid=1000 -o gid=1000 -o mode=0750, and a container running as uid 1000"
check_ok "(i) docker volume create v8 without an owner" dk volume create -d "$DRIVER" v8
check_fails "(i) premise: uid 1000 cannot write to a root-owned 0755 volume" \
  dk run --rm --network none --user 1000:1000 -v v8:/data "$IMG" sh -c 'echo x > /data/f'
check_ok "(i) docker volume rm v8" dk volume rm v8
check_ok "(i) docker volume create v9 -o uid=1000 -o gid=1000 -o mode=0750" \
  dk volume create -d "$DRIVER" -o uid=1000 -o gid=1000 -o mode=0750 v9
# /vol is not in the image: dockerd copies nothing into the volume (see the next case).
check_ok "(i) a container running as uid 1000 writes to v9's root" \
  dk run --rm --network none --user 1000:1000 -v v9:/vol "$IMG" sh -c 'echo mine > /vol/f'
check "(i) the container sees its root as 1000 1000 750" "1000 1000 750" \
  "$(dk run --rm --network none -v v9:/vol "$IMG" stat -c '%u %g %a' /vol 2>&1)"
check "(i) the file is uid 1000's on the host" "1000 mine" \
  "$(stat -c %u "$STATE/volumes/v9/data/f" 2>&1) $(cat "$STATE/volumes/v9/data/f" 2>&1)"
check_ok "(i) docker volume rm v9" dk volume rm v9
# dockerd's copy-up: an empty volume mounted where the image has a directory (/data) gets
# that directory's content, owner and mode, unless the mount says nocopy.
check_ok "(i) docker volume create v11 -o uid=1000 -o gid=1000 -o mode=0750" \
  dk volume create -d "$DRIVER" -o uid=1000 -o gid=1000 -o mode=0750 v11
check "(i) with :nocopy over the image's /data, the root stays 1000 1000 750" "1000 1000 750" \
  "$(dk run --rm --network none -v v11:/data:nocopy "$IMG" stat -c '%u %g %a' /data 2>&1)"
check "(i) dockerd's copy-up gives the empty root the image's /data owner and mode" "0 0 755" \
  "$(dk run --rm --network none -v v11:/data "$IMG" stat -c '%u %g %a' /data 2>&1)"
check_ok "(i) docker volume rm v11" dk volume rm v11
check_fails "(i) -o mode=0999 is refused" dk volume create -d "$DRIVER" -o mode=0999 v10
check_contains "(i) the error names the option and the value" 'option "mode" of volume v10 is not an octal mode: "0999"' \
  "$LAST_OUTPUT"
check "(i) v10 was not created" absent "$( [[ -e "$STATE/volumes/v10" ]] && echo present || echo absent)"

# -- (g) removing a volume in use ---------------------------------------------------------
log "(g) rm of a volume in use"
check_ok "(g) docker volume create v7" dk volume create -d "$DRIVER" v7
check_ok "(g) container g1 uses v7" run_bg g1 v7
check_mounted "(g) while g1 runs" v7
check_fails "(g) docker volume rm v7 is refused while g1 runs" dk volume rm v7
check_contains "(g) docker says the volume is in use" "in use" "$LAST_OUTPUT"
err=$(plugin_err Remove '{"Name":"v7"}')
check_contains "(g) berthd itself answers Remove with 'volume in use'" "volume in use" "$err"
check "(g) v7 still mounted after the refused Remove" 1 "$(mount_count "$(vol_mnt v7)")"
check "(g) v7's directory still exists" present \
  "$( [[ -d "$STATE/volumes/v7" ]] && echo present || echo absent)"
check_ok "(g) docker stop g1" stop_rm g1
check_unmounted "(g) after g1 stops" v7
check_ok "(g) docker volume rm v7 once unused" dk volume rm v7

# -- (h) options, ls, inspect -------------------------------------------------------------
log "(h) bad option, volume ls, volume inspect"
check_fails "(h) docker volume create -o bogus=1 is refused" dk volume create -d "$DRIVER" -o bogus=1 v6
check_contains "(h) the error names the option" bogus "$LAST_OUTPUT"
check "(h) v6 was not created" absent "$( [[ -e "$STATE/volumes/v6" ]] && echo present || echo absent)"
ls_out=$(dk volume ls --format '{{.Driver}} {{.Name}}' 2>&1)
check_contains "(h) docker volume ls lists v1" "$DRIVER v1" "$ls_out"
check_contains "(h) docker volume ls lists v3" "$DRIVER v3" "$ls_out"
status=$(dk volume inspect -f '{{json .Status}}' v1 2>&1)
check "(h) docker volume inspect shows a Status map" yes \
  "$(json_get "$status" '"yes" if isinstance(d, dict) and len(d) > 0 else "no"' 2>/dev/null || echo "no: $status")"
check_ok "(h) container h1 uses v1" run_bg h1 v1
mp=$(dk volume inspect -f '{{.Mountpoint}}' v1 2>&1)
check "(h) docker volume inspect shows the Mountpoint while mounted" "$(vol_mnt v1)" "$mp"
check_ok "(h) docker stop h1" stop_rm h1
check_ok "(h) docker volume rm v1 v2 v3" dk volume rm v1 v2 v3
check "(h) no berth volume left in docker volume ls" "" \
  "$(dk volume ls -q --filter "driver=$DRIVER" 2>&1)"
check "(h) no host mount left under the state dir" 0 \
  "$(awk -v d="$STATE/" 'index($5, d) == 1' /proc/self/mountinfo | wc -l)"

check_ok "berthd stops on SIGTERM" stop_berthd
e2e_finish
