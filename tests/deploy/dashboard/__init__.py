"""The checks of dashboard_check.py, one module for each thing they check.

  expressions   reading the dashboard: its panels' expressions, Grafana's variables
                substituted, and what each expression names (Parsed)
  families      the metric families of docs/running.md's Metrics table, against
                protocols/metrics
  structure     the dashboard's shape: variables, panel ids, grid, datasources, targets
  names         the metrics and labels the expressions name, against those families
  promtool      promtool check rules on every expression, check config on a scrape config
  relabelling   the pod-discovery relabelling, run in a real Prometheus on loopback
  live          against a live berthd: its /metrics page, a Prometheus scraping it
  self_test     each broken dashboard and page must be refused
"""
