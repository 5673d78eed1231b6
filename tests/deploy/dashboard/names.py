"""The names the expressions use, against docs/running.md's Metrics table: every metric a
documented family (a histogram through _bucket, _sum or _count), every label one of its
family's or a target label, variables only inside =~ matchers, histogram_quantile() over
_bucket by `le`, rate()/increase() never of a gauge, and legends naming only labels the
expression has."""

import re

from deploy_common import Failure

from .expressions import Parsed, TARGET_LABELS, expressions, substitute, variable_names
from .families import DOCS, family_of


def check_names(dash, families):
    """Metrics, labels, histograms and rates against the documented families."""
    problems = []
    for where, p, expr in expressions(dash):
        try:
            text = substitute(expr, dash)
        except Failure as e:
            problems.append(f"{where}: {e}")
            continue
        for m in re.finditer(r"\$\{?(\w+)\}?", expr):
            if m.group(1) in variable_names(dash) and not re.search(
                    r'=~\s*"[^"]*' + re.escape(m.group(0)), expr):
                problems.append(f"{where}: ${m.group(1)} is used outside a =~ matcher (a "
                                "multi-value or All selection is a regex)")
        parsed = Parsed(text)
        allowed = set(TARGET_LABELS)
        for name in parsed.metrics:
            fam = family_of(name, families)
            if fam is None:
                hint = (" (a histogram: read it through _bucket, _sum or _count)"
                        if families.get(name, ("",))[0] == "histogram" else "")
                problems.append(f"{where}: metric {name} is not a family of {DOCS}'s Metrics "
                                f"table{hint}")
                continue
            allowed |= fam[2]
            if name.endswith("_bucket"):
                allowed.add("le")
            if name in parsed.rated and fam[1] == "gauge":
                problems.append(f"{where}: rate()/increase() of the gauge {name}")
        for label in sorted(parsed.labels - allowed):
            problems.append(f"{where}: label {label} is on none of {sorted(set(parsed.metrics))}")
        for inside, by in parsed.quantiles:
            if not any(n.endswith("_bucket") for n in inside):
                problems.append(f"{where}: histogram_quantile() reads no _bucket series")
            if "le" not in by:
                problems.append(f"{where}: histogram_quantile() without `le` in its by ()")
        for t in p.get("targets", []):
            if t.get("expr") == expr:
                for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", t.get("legendFormat", "")):
                    if label not in allowed:
                        problems.append(f"{where}: legend names {{{{{label}}}}}, a label "
                                        "the expression does not have")
    return problems
