"""The checker's own test (--self-test): each mutation of the valid dashboard, and of a
/metrics page that satisfies it, must be refused by the checks, so that a check that
silently stops checking fails here."""

import copy
import re

from .expressions import Parsed, all_panels, expressions, substitute
from .live import check_against_page
from .names import check_names
from .promtool import check_promql
from .structure import check_structure


def self_test(dash, families, promtool):
    """Each mutation of a valid dashboard (or page) must be refused. Returns the mutations
    that were not."""
    def first_target(d):
        return next(t for p in all_panels(d["panels"]) for t in p.get("targets", []))

    def mutate(change):
        d = copy.deepcopy(dash)
        change(d)
        return d

    def set_expr(expr):
        return lambda d: first_target(d).update(expr=expr)

    def replace_everywhere(old, new):
        def change(d):
            for p in all_panels(d["panels"]):
                for t in p.get("targets", []):
                    t["expr"] = t["expr"].replace(old, new)
        return change

    offline = [
        ("an unbalanced parenthesis", set_expr('sum(rate(berth_operations_total[5m])')),
        ("rate() of an instant vector", set_expr("rate(berth_operations_total)")),
        ("an unknown function", set_expr("rates(berth_operations_total[5m])")),
        ("a misspelt metric", set_expr("sum(rate(berth_operation_total[5m]))")),
        ("a histogram read without _bucket",
         set_expr("histogram_quantile(0.5, sum by (le) "
                  "(rate(berth_operation_duration_seconds[5m])))")),
        ("histogram_quantile() without le",
         set_expr("histogram_quantile(0.5, sum by (operation) "
                  "(rate(berth_operation_duration_seconds_bucket[5m])))")),
        ("a misspelt label", set_expr('sum by (operaton) (rate(berth_operations_total[5m]))')),
        ("rate() of a gauge", set_expr("rate(berth_journal_bytes[5m])")),
        ("an unknown variable", set_expr('berth_ready{instance=~"$host"}')),
        ("a duplicate panel id", lambda d: d["panels"][2].update(id=d["panels"][1]["id"])),
        ("a panel without targets", lambda d: d["panels"][1].update(targets=[])),
        ("a fixed datasource", lambda d: first_target(d).update(
            datasource={"type": "prometheus", "uid": "P1809F7CD0C75ACF3"})),
        ("no instance variable", lambda d: d["templating"].update(
            list=[v for v in d["templating"]["list"] if v["name"] != "instance"])),
    ]
    missed = []
    for what, change in offline:
        d = mutate(change)
        if not (check_structure(d) + check_names(d, families) + check_promql(d, promtool)):
            missed.append(f"offline: {what}")
    page = "\n".join(n + "{" + ",".join(label + '="x"' for label in sorted(ls)) + "} 1"
                     for n, ls in fake_page(dash).items())
    if check_against_page(dash, page):
        missed.append(f"online: a page with every series is refused: "
                      f"{check_against_page(dash, page)[:3]}")
    for what, text in (
            ("a page without berth_journal_bytes",
             "\n".join(l for l in page.splitlines() if not l.startswith("berth_journal_bytes{"))),
            ("a page whose berth_volumes has no kind label",
             re.sub(r'(berth_volumes\{[^}]*)kind="x",?', r"\1", page)),
            ("an empty page", "")):
        if not check_against_page(dash, text):
            missed.append(f"online: {what}")
    if not check_against_page(mutate(replace_everywhere("berth_journal_bytes",
                                                        "berth_journal_byte")), page):
        missed.append("online: a misspelt metric")
    return missed


def fake_page(dash):
    """{series: labels} that satisfies every expression (for the self-test)."""
    out = {}
    for _, _, expr in expressions(dash):
        parsed = Parsed(substitute(expr, dash))
        for name in parsed.metrics:
            out.setdefault(name, set())
        for metric, label in parsed.matchers:
            if metric:
                out[metric].add(label)
    out.setdefault("berth_build_info", set())
    return out
