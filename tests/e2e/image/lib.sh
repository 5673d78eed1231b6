# shellcheck shell=bash
# Shared by image_e2e.sh and plugin_e2e.sh (after ../lib.sh and ../dockerd_lib.sh).

# start_dockerd_for_images: the private dockerd, with overlay2 where this host's filesystem
# allows it: vfs copies an image's whole tree for every container (about 10 s a container for
# the berthd image here, under 2 s with overlay2). Falls back to vfs, saying so.
start_dockerd_for_images() {
  if ! dockerd_start --storage-driver=overlay2; then
    if [[ -n "$DOCKERD_PID" ]]; then
      kill -KILL "$DOCKERD_PID" 2>/dev/null
      wait "$DOCKERD_PID" 2>/dev/null
    fi
    DOCKERD_PID=""
    log "overlay2 is not available here; the private dockerd uses vfs (slower)"
    dockerd_first_start
  fi
  log "storage driver: $(dk info --format '{{.Driver}}')"
}

# timed NAME: notes how long the step that just ended took (since t0), for the summary.
IMAGE_TIMINGS=()
t0=$SECONDS
timed() {
  IMAGE_TIMINGS+=("$(printf '%-44s %4d s' "$1" $((SECONDS - t0)))")
  t0=$SECONDS
}
print_timings() {
  echo
  echo "== time per step (BERTH_CACHE_DIR=$BERTH_CACHE_DIR)"
  printf '   %s\n' "${IMAGE_TIMINGS[@]}"
}

# package_helpers: the helpers deploy/runtime/packages.txt names (each line's comment up to
# its colon, the format that file states).
package_helpers() {
  sed -n 's/^[a-z0-9][^#]*#\([^:]*\):.*/\1/p' "$SRC/deploy/runtime/packages.txt" | xargs
}
