#!/usr/bin/env python3
"""How long a cut-off agent takes to be noticed, per network mode.

    partition_notice.py --bin DIR [--net netns|proxy] [--agents N] [--cut S]

Starts an orchestrator and N agents with chaos.py's configuration
(heartbeat_interval 2 s, suspect_after 6 s), cuts agent 0 off for S seconds
(default 30) and prints, from the cut: when the center's `node list` shows it
SUSPECT and not connected, and after the heal, when it shows it connected
again. Then the same for the other agents (they are not cut: their liveness
must stay ALIVE). Exit 1 if the center never showed the cut-off agent
disconnected.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--net", choices=["netns", "proxy"], default="netns")
    ap.add_argument("--agents", type=int, default=2)
    ap.add_argument("--cut", type=float, default=30)
    a = ap.parse_args()
    args = argparse.Namespace(bin=a.bin, env=[], agents=a.agents, ack_timeout=3)
    work = tempfile.mkdtemp(prefix="apollo-notice.")
    c = chaos.Cluster(args, work)
    rc = 1
    try:
        c.write_configs()
        c.ensure_orch()
        c.start_net(a.net)
        for i in range(a.agents):
            c.start_agent(i)

        def nodes():
            r, so, _ = c.cli("-o", "json", "node", "list", timeout=5)
            return {n["node_id"]: n for n in json.loads(so)["nodes"]} if r == 0 else {}

        deadline = time.time() + 60
        while time.time() < deadline:
            ns = nodes()
            if len(ns) == a.agents and all(n["connected"] and n["liveness"] == "ALIVE"
                                           for n in ns.values()):
                break
            time.sleep(0.2)
        else:
            raise chaos.SetupError("agents did not connect")
        time.sleep(3)  # a heartbeat or two on a settled stream
        t0 = time.time()
        c.partition(0)
        seen = {}
        others_ok = True
        while time.time() - t0 < a.cut:
            ns = nodes()
            n = ns.get(c.names[0])
            if n:
                if n["liveness"] != "ALIVE":
                    seen.setdefault(f"liveness {n['liveness']}", round(time.time() - t0, 1))
                if not n["connected"]:
                    seen.setdefault("not connected", round(time.time() - t0, 1))
            others_ok &= all(ns[m]["connected"] and ns[m]["liveness"] == "ALIVE"
                             for m in c.names[1:] if m in ns)
            time.sleep(0.2)
        t1 = time.time()
        c.heal(0)
        back = None
        while time.time() - t1 < 60:
            n = nodes().get(c.names[0])
            if n and n["connected"] and n["liveness"] == "ALIVE":
                back = round(time.time() - t1, 1)
                break
            time.sleep(0.2)
        print(f"net={a.net} cut {a.cut:g} s: " +
              ", ".join(f"{k} after {v} s" for k, v in sorted(seen.items(), key=lambda kv: kv[1]))
              + f"; after the heal connected and ALIVE in {back} s; other agents "
              + ("stayed connected and ALIVE" if others_ok else "were disturbed"), flush=True)
        with open(os.path.join(work, c.names[0] + ".log")) as f:
            print("agent 0 log:", *[line.rstrip() for line in f if "connected" in line
                                    or "stream" in line][-4:], sep="\n  ")
        rc = 0 if "not connected" in seen and back is not None and others_ok else 1
    except chaos.SetupError as e:
        print(f"partition_notice: setup error: {e}", file=sys.stderr)
        rc = 2
    finally:
        c.shutdown()
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
