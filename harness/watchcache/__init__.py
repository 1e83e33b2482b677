"""Watch-cache experiments (issue 9): populate a cluster, list it in one mode per phase, tabulate per mode x arm."""
