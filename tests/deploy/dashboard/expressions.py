"""Reading the dashboard: every panel's expressions, Grafana's variables substituted, and
what an expression names (metrics, labels, rate() and histogram_quantile() arguments). The
checks of names, live and self_test all read expressions through this one parser."""

import re

from deploy_common import Failure

# Grafana's built-in variables, as the checks replace them.
BUILTINS = {"__rate_interval": "1m", "__interval": "30s", "__range": "1h", "__range_s": "3600",
            "__interval_ms": "30000"}
# Labels a scrape adds to every series (the static job, pod discovery, the ServiceMonitor).
TARGET_LABELS = {"instance", "job", "namespace", "pod", "node"}

AGGREGATORS = {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk",
               "quantile", "count_values", "group"}
KEYWORDS = AGGREGATORS | {"by", "without", "on", "ignoring", "group_left", "group_right",
                          "bool", "offset", "and", "or", "unless", "atan2", "inf", "nan"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
RATE_FUNCTIONS = {"rate", "irate", "increase"}
TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`|\[[^\]]*\]'
                   r"|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?:ms|[smhdwy])*"
                   r"|[A-Za-z_:][A-Za-z0-9_:]*|=~|!~|!=|==|>=|<=|\S")


def all_panels(panels):
    """Every panel, those inside rows included."""
    out = []
    for p in panels:
        out.append(p)
        out += all_panels(p.get("panels", []))
    return out


def expressions(dash):
    """(where, panel, expr) for every target of every panel."""
    out = []
    for p in all_panels(dash.get("panels", [])):
        for t in p.get("targets", []):
            where = f"panel {p.get('id')} \"{p.get('title')}\" target {t.get('refId')}"
            out.append((where, p, t.get("expr", "")))
    return out


def variable_names(dash):
    return {v.get("name") for v in dash.get("templating", {}).get("list", [])}


def substitute(expr, dash, values=None):
    """expr with every $var / ${var} replaced: Grafana's built-ins by a duration, the
    dashboard's variables by `values` (default: a regex that matches anything). Raises
    Failure naming a variable the dashboard does not define."""
    values = values or {}
    names = variable_names(dash)

    def sub(m):
        name = m.group(1) or m.group(2)
        if name in BUILTINS:
            return BUILTINS[name]
        if name in names:
            return values.get(name, ".+")
        raise Failure(f"uses ${name}, which is neither a dashboard variable "
                      f"({sorted(names)}) nor one of Grafana's {sorted(BUILTINS)}")
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", sub, expr)


class Parsed:
    """What an expression names: metrics (and which are inside rate()/increase()), labels
    in matchers and groupings, histogram_quantile() calls and their `by` labels."""

    def __init__(self, expr):
        self.metrics, self.rated, self.labels = [], set(), set()
        self.matchers = []  # (metric or None, label)
        self.quantiles = []  # (metrics inside, labels of the `by` inside)
        tokens = TOKEN.findall(expr)
        stack = []  # for each open paren: the function before it ("" if none)
        brace_metric = None
        in_brace = False
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            if tok == "{":
                in_brace = True
                prev = tokens[i - 1] if i else ""
                brace_metric = prev if prev in self.metrics else None
            elif tok == "}":
                in_brace = False
            elif in_brace:
                if re.match(r"[A-Za-z_]\w*$", tok) and nxt in ("=", "!=", "=~", "!~"):
                    self.labels.add(tok)
                    self.matchers.append((brace_metric, tok))
            elif tok in GROUPING and nxt == "(":
                j = i + 2
                group = []
                while j < len(tokens) and tokens[j] != ")":
                    if tokens[j] != ",":
                        group.append(tokens[j])
                    j += 1
                self.labels.update(group)
                for frame in stack:
                    if frame[0] == "histogram_quantile":
                        frame[2].update(group)
                i = j
            elif tok == "(":
                prev = tokens[i - 1] if i else ""
                is_call = bool(re.match(r"[A-Za-z_]\w*$", prev)) and prev not in GROUPING
                stack.append([prev if is_call else "", [], set()])
            elif tok == ")":
                if stack:
                    frame = stack.pop()
                    if frame[0] == "histogram_quantile":
                        self.quantiles.append((frame[1], frame[2]))
            elif re.match(r"[A-Za-z_:][A-Za-z0-9_:]*$", tok) and nxt != "(" \
                    and tok not in KEYWORDS:
                self.metrics.append(tok)
                for frame in stack:
                    frame[1].append(tok)
                    if frame[0] in RATE_FUNCTIONS:
                        self.rated.add(tok)
            i += 1
