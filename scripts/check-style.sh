#!/usr/bin/env bash
# Holds what changed since the house habits began (the commit that added .clang-format) to
# them (docs/testing.md, "House habits"): every changed line of C++ to .clang-format, and
# every changed line outside tests/ to .clang-tidy's checks, in the changed sources compiled
# as BUILD_DIR's compile_commands.json says (a header's lines through them). Older lines are
# left as they are until they change, so a reformat never buries a change in the history.
# Prints what is wrong and exits 1; exits 0 when all is well; 77 (a skip, loud) outside a
# git work tree.
#
#   scripts/check-style.sh [SOURCE_DIR [BUILD_DIR]]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
build="${2:-$root/build}"
cd "$root"
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "check-style: SKIPPED: $root is not a git work tree, so nothing tells what changed"
  exit 77
fi
base=$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)
if [[ -z "$base" ]]; then
  base=HEAD # .clang-format not committed yet: what the work tree changed
fi
problems=0

# -- layout: the changed lines -----------------------------------------------------------
# Its --diff exits 0 whether or not it found something (clang-format 14): the diff says.
out=$(git clang-format-14 --binary clang-format-14 --style=file --diff \
        --extensions cpp,hpp,h,cc "$base" 2>&1)
if grep -q '^diff --git' <<<"$out"; then
  echo "$out"
  echo "check-style: the lines above are not laid out as .clang-format says;" \
       "'git clang-format-14 $base' lays them out"
  problems=1
fi

# -- checks: the changed lines of the changed sources -------------------------------------
db="$build/compile_commands.json"
if [[ ! -f "$db" ]]; then
  echo "check-style: $db is missing; build first (scripts/build.sh)"
  exit 1
fi
mapfile -t changed < <(git diff --name-only --diff-filter=AM "$base" -- '*.cpp' '*.cc' \
                         | grep -v '^tests/' || true)
sources=()
for f in "${changed[@]}"; do
  # Only what the build compiles: its flags are what the checks need.
  if [[ -n "$f" ]] && grep -qF "\"$root/$f\"" "$db"; then
    sources+=("$f")
  fi
done
if ((${#sources[@]})); then
  # The changed lines of every changed file, headers too, as clang-tidy's --line-filter:
  # a diagnostic elsewhere is not this change's.
  lines=$(git diff -U0 "$base" -- '*.cpp' '*.cc' '*.hpp' '*.h' | python3 -c '
import json, re, sys
ranges, name = {}, None
for line in sys.stdin:
    if line.startswith("+++ "):
        name = line[4:].strip()
        name = None if name == "/dev/null" else name[2:]
    m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
    if m and name and not name.startswith("tests/"):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        if count:
            ranges.setdefault(name, []).append([start, start + count - 1])
print(json.dumps([{"name": n, "lines": r} for n, r in ranges.items()] or [{"name": "-"}]))')
  if ! out=$(clang-tidy-14 -p "$build" --quiet --header-filter='.*' --line-filter="$lines" \
               "${sources[@]}" 2>&1); then
    grep -v -e '^[0-9]* warnings\? generated' -e '^Suppressed ' <<<"$out" || true
    echo "check-style: .clang-tidy's checks refuse the lines above"
    problems=1
  fi
fi
if ((problems)); then
  exit 1
fi
echo "check-style: the C++ changed since $(git rev-parse --short "$base") is laid out as" \
     ".clang-format says; its lines in ${#sources[@]} changed source(s) pass .clang-tidy"
