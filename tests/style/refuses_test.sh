#!/usr/bin/env bash
# scripts/check-style.sh refuses what it should: in a scratch repository whose history
# adds .clang-format and .clang-tidy, a later source with a line laid out wrong and a use
# after move must be refused, naming the file and the check; the same source written
# well must pass; and a line laid out wrong before the habits began is left alone.
#
#   tests/style/refuses_test.sh SOURCE_DIR
set -euo pipefail
src="$1"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
git init -q .
git config user.email test@berth.invalid
git config user.name test
mkdir -p core scripts build
cp "$src/scripts/check-style.sh" scripts/
printf 'int old_style(int x){return x;}\n' >core/old.cpp
git add -A && git commit -qm "before the habits"
cp "$src/.clang-format" "$src/.clang-tidy" .
git add -A && git commit -qm "the habits begin"
cat >core/bad.cpp <<'CPP'
#include <string>
#include <utility>

std::string moved(std::string s) {
  auto t = std::move(s);
  return s + t;
}

int laid_out_wrong(int x){if(x) return 1; return 0;}
CPP
cat >build/compile_commands.json <<JSON
[{"directory": "$scratch", "file": "$scratch/core/bad.cpp",
  "command": "c++ -std=c++17 -c core/bad.cpp -o /dev/null"},
 {"directory": "$scratch", "file": "$scratch/core/old.cpp",
  "command": "c++ -std=c++17 -c core/old.cpp -o /dev/null"}]
JSON
git add core/bad.cpp
rc=0
out=$(scripts/check-style.sh "$scratch" "$scratch/build" 2>&1) || rc=$?
fail() {
  echo "FAIL: $1"
  echo "$out"
  exit 1
}
((rc == 1)) || fail "check-style exited $rc, not 1, on a badly written change"
grep -q 'laid_out_wrong' <<<"$out" || fail "the layout diff does not show the bad line"
grep -q 'core/bad.cpp:.*bugprone-use-after-move' <<<"$out" || fail "the use after move is not named"
grep -q 'old_style' <<<"$out" && fail "a line older than the habits was held to them"

cat >core/bad.cpp <<'CPP'
#include <string>
#include <utility>

std::string moved(std::string s) {
  auto t = std::move(s);
  return t + t;
}

int laid_out_well(int x) {
  if (x) {
    return 1;
  }
  return 0;
}
CPP
rc=0
out=$(scripts/check-style.sh "$scratch" "$scratch/build" 2>&1) || rc=$?
((rc == 0)) || fail "check-style exited $rc on a change written well"
grep -q 'its lines in 1 changed source(s) pass' <<<"$out" || fail "the passing line does not count the source"
echo "ok: check-style refuses a bad layout and a use after move, passes them fixed, and leaves older lines alone"
