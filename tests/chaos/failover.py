#!/usr/bin/env python3
"""Failover times of a replicated chaos run (chaos.py --replicas N).

A fault that hits the leader (replica_kill, replica_pause, replica_partition,
replica_slow, or orch_kill when it drew the leader) starts a failover when the
leader loses its lease: the time until some replica logs "leading: took the
leader lease" is what agents and dispatch wait for. Holds shorter than the
lease may leave the leader in place; those are counted as kept, not timed.

  python3 tests/chaos/failover.py RUN_DIR [CHAOS_LOG]

reads the replicas' logs (orchestrator-rN.log, JSON lines) in RUN_DIR and the
faults on the leader from RUN_DIR/run.json (or, for a run from before this
file, from the driver's output CHAOS_LOG: "[chaos HH:MM:SS] KIND: the leader
is rN" lines, to the second).
"""
import datetime
import glob
import json
import os
import re
import statistics
import sys

TOOK = "leading: took the leader lease at epoch"


def leader_changes(run_dir):
    """[(unix time, replica id, epoch)] of every lease taking, in time order."""
    out = []
    for path in glob.glob(os.path.join(run_dir, "orchestrator-r*.log")):
        rid = re.search(r"orchestrator-(r\d+)\.log$", path).group(1)
        with open(path, errors="replace") as f:
            for line in f:
                if TOOK not in line:
                    continue
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                t = datetime.datetime.fromisoformat(j["ts"].replace("Z", "+00:00")).timestamp()
                epoch = int(re.search(r"epoch (\d+)", j["msg"]).group(1))
                out.append((t, rid, epoch))
    return sorted(out)


def failovers(hits, changes):
    """For each (kind, victim, start) of a fault on the leader: the seconds
    until the next lease taking, if one came before the next such fault,
    else None (the leader kept its lease)."""
    hits = sorted(hits, key=lambda h: h[2])
    out = []
    for i, (kind, victim, start) in enumerate(hits):
        end = hits[i + 1][2] if i + 1 < len(hits) else float("inf")
        took = next((c for c in changes if start <= c[0] < end), None)
        out.append((kind, victim, start, None if took is None else took[0] - start,
                    None if took is None else took[1]))
    return out


def summary(results):
    """One line per fault kind, and one for all: n, kept, min/median/p90/max."""
    lines = []
    kinds = sorted({r[0] for r in results})
    for kind in kinds + ["all"]:
        rs = [r for r in results if kind == "all" or r[0] == kind]
        times = sorted(r[3] for r in rs if r[3] is not None)
        kept = sum(1 for r in rs if r[3] is None)
        if not times:
            lines.append(f"{kind}: {len(rs)} on the leader, {kept} kept the lease, no failover")
            continue
        p90 = times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))]
        lines.append(f"{kind}: {len(rs)} on the leader, {len(times)} failovers, {kept} kept the "
                     f"lease; new leader after min {times[0]:.2f} s, median "
                     f"{statistics.median(times):.2f} s, p90 {p90:.2f} s, max {times[-1]:.2f} s")
    return lines


def hits_from_driver_log(path, day):
    """Faults on the leader from a driver's output (to the second)."""
    out = []
    pat = re.compile(r"^\[chaos (\d\d:\d\d:\d\d)\] (\w+): the leader is (r\d+)")
    with open(path, errors="replace") as f:
        for line in f:
            m = pat.match(line)
            if m:
                t = datetime.datetime.fromisoformat(f"{day}T{m.group(1)}+00:00").timestamp()
                out.append((m.group(2), m.group(3), t))
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    run_dir = sys.argv[1]
    changes = leader_changes(run_dir)
    run_json = os.path.join(run_dir, "run.json")
    if len(sys.argv) == 3:
        day = (datetime.datetime.fromtimestamp(changes[0][0], datetime.timezone.utc).date()
               if changes else datetime.date.today())
        hits = hits_from_driver_log(sys.argv[2], day.isoformat())
    elif os.path.exists(run_json):
        with open(run_json) as f:
            hits = [tuple(h) for h in (json.load(f).get("replication") or {}).get("leader_hits", [])]
    else:
        print(f"{run_dir}: no run.json and no driver log given", file=sys.stderr)
        return 2
    for line in summary(failovers(hits, changes)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
