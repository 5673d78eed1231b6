#!/usr/bin/env bash
# Holds every #include of berth's sources to the layer table of docs/architecture.md
# ("Layers"): a file may include headers of its own module and of the modules its row
# names, nothing else. The table is read from the document, so the rule is written once.
# Prints each wrong-way include with its file, line, the module it reaches and the rule,
# and exits 1; exits 0 when every include is allowed.
#
#   scripts/check-layers.sh [SOURCE_DIR]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
exec python3 - "$root" <<'PY'
import os, re, sys

root = sys.argv[1]
doc = os.path.join(root, "docs/architecture.md")
text = open(doc, encoding="utf-8").read()
m = re.search(r"<!-- layers:begin -->(.*?)<!-- layers:end -->", text, re.S)
if not m:
    sys.exit(f"check-layers: {doc} has no <!-- layers:begin --> ... <!-- layers:end --> table")

# | module | where | may use |
modules = {}   # name -> (prefixes, allowed names)
for line in m.group(1).splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) != 3 or cells[0] in ("module", "") or set(cells[0]) <= set("-: "):
        continue
    name = cells[0]
    where = re.findall(r"`([^`]+)`", cells[1])
    uses = [u.strip() for u in cells[2].split(",") if u.strip() and u.strip() != "—"]
    modules[name] = (where, set(uses))
if not modules:
    sys.exit(f"check-layers: the table in {doc} has no rows")
for name, (_, uses) in modules.items():
    for u in uses:
        if u not in modules:
            sys.exit(f"check-layers: row {name} of {doc} uses {u!r}, which is no module")

def module_of(path):
    """The module whose longest `where` entry is a prefix of (or equals) path."""
    best, best_len = None, -1
    for name, (where, _) in modules.items():
        for w in where:
            if (path == w or (w.endswith("/") and path.startswith(w))) and len(w) > best_len:
                best, best_len = name, len(w)
    return best

problems = 0
checked = 0
include = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
for dirpath, dirnames, filenames in os.walk(root):
    rel_dir = os.path.relpath(dirpath, root)
    dirnames[:] = [d for d in dirnames
                   if not d.startswith(".") and not (rel_dir == "." and d in ("build", "tests"))
                   and not d.startswith("build")]
    for fn in filenames:
        if not fn.endswith((".cpp", ".hpp", ".h", ".cc")):
            continue
        rel = os.path.normpath(os.path.join(rel_dir, fn))
        mine = module_of(rel)
        if mine is None:
            print(f"{rel}: belongs to no module of the layer table in docs/architecture.md")
            problems += 1
            continue
        checked += 1
        with open(os.path.join(dirpath, fn), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                inc = include.match(line)
                if not inc:
                    continue
                target = inc.group(1)
                theirs = module_of(target)
                if theirs is None:
                    if os.path.exists(os.path.join(root, target)):
                        print(f"{rel}:{n}: #include \"{target}\" belongs to no module of the layer table")
                        problems += 1
                    continue  # a system or generated header the table does not name
                if theirs == mine or theirs in modules[mine][1]:
                    continue
                allowed = ", ".join(sorted(modules[mine][1])) or "no other module"
                print(f"{rel}:{n}: #include \"{target}\" reaches {theirs}, but {mine} may use only {allowed}")
                problems += 1
if problems:
    print(f"check-layers: {problems} wrong-way include(s) in {checked} files; the rule is the table "
          f"\"Layers\" of docs/architecture.md")
    sys.exit(1)
print(f"check-layers: {checked} files, every include follows the layer table")
PY
