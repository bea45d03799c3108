#!/usr/bin/env python3
"""Paired end-to-end benchmark: two builds' apollo-bench, in turns.

On a shared 2-core machine two runs minutes apart do not compare; this runs
build A's and build B's apollo-bench (each starting its own orchestrator and
simulated agents) back to back, order alternating each round, and prints the
median of each figure and the median ratio B/A (throughput) or A/B
(latency), so above 1 is better for B in both.

  scripts/bench-e2e-paired.py --a OLD/bin --b NEW/bin [--rounds 3] \
      [--tasks 50000] [--pg] [--extra '--agents 100'] [--extra-a ARGS] [--extra-b ARGS]

The arguments are the ones `make bench-compare` gives apollo-bench
(throughput and latency with one agent); --pg runs both on PostgreSQL.
"""
import argparse
import json
import statistics
import subprocess
import sys

FIGURES = [  # (scenario, field, higher_is_better)
    ("throughput", "tasks_per_s", True),
    ("latency_1_agents", "p50_ms", False),
    ("latency_1_agents", "p99_ms", False),
]


def run(bin_dir, args, extra):
    cmd = [f"{bin_dir}/apollo-bench", "--scenarios", "throughput,latency",
           "--latency-agents", "1", "--tasks", str(args.tasks)]
    if args.pg:
        cmd.append("--pg")
    cmd += args.extra.split() + extra.split()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=1800)
    got = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            for scenario, field, _ in FIGURES:
                if row.get("scenario") == scenario and row.get(field) is not None:
                    got[(scenario, field)] = float(row[field])
    if p.returncode != 0 or len(got) != len(FIGURES):
        sys.exit(f"bench-e2e-paired: {cmd[0]} failed (exit {p.returncode}):\n{p.stdout[-2000:]}")
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="the bin/ directory of build A (before)")
    ap.add_argument("--b", required=True, help="the bin/ directory of build B (after)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=50000)
    ap.add_argument("--pg", action="store_true", help="both on a throwaway PostgreSQL 15")
    ap.add_argument("--extra", default="", help="more apollo-bench arguments, for both")
    ap.add_argument("--extra-a", default="", help="more apollo-bench arguments, for A only")
    ap.add_argument("--extra-b", default="", help="more apollo-bench arguments, for B only "
                    "(e.g. the same bin/ twice with another --orchestrator-config)")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("bench-e2e-paired: --rounds must be at least 1")
    a_runs, b_runs = [], []
    for r in range(args.rounds):
        order = [("a", args.a, args.extra_a), ("b", args.b, args.extra_b)]
        if r % 2:
            order.reverse()
        got = {}
        for name, bin_dir, extra in order:
            got[name] = run(bin_dir, args, extra)
        a_runs.append(got["a"])
        b_runs.append(got["b"])
        print(f"  round {r + 1}: " + "  ".join(
            f"{s}.{f} a={got['a'][(s, f)]:.2f} b={got['b'][(s, f)]:.2f}" for s, f, _ in FIGURES),
            flush=True)
    store = "postgres" if args.pg else "sqlite"
    for scenario, field, higher in FIGURES:
        a = [x[(scenario, field)] for x in a_runs]
        b = [x[(scenario, field)] for x in b_runs]
        ratios = [(bb / aa if higher else aa / bb) if (aa > 0 and bb > 0) else 0.0
                  for aa, bb in zip(a, b)]
        print(f"store={store} {scenario}.{field} a_median={statistics.median(a):.2f} "
              f"b_median={statistics.median(b):.2f} ratio_median={statistics.median(ratios):.2f} "
              f"ratio_min={min(ratios):.2f} (above 1: B better)")


if __name__ == "__main__":
    main()
