#!/usr/bin/env python3
"""Paired store benchmark: two store_bench binaries, case by case, in turns.

On a shared 2-core machine two runs minutes apart do not compare; this runs
binary A and binary B back to back on each case (order alternating each
round), each on a fresh store, and prints the median ratio B/A per case
(events/s; and A/B of CPU per event, so above 1 is better for B in both).

  scripts/bench-store-paired.py --a OLD/store_bench --b NEW/store_bench \
      [--rounds 3] [--events 50000] [--cases 1:1,100:1,1000:1,1:16,100:4] \
      [--backends sqlite,postgres]

PostgreSQL: one throwaway durable server (initdb in a temp dir, loopback,
stock settings) for the whole run, a fresh database per measurement, stopped
at exit whatever happens.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile

PG_BIN = os.environ.get("APOLLO_PG_BIN", "/usr/lib/postgresql/15/bin")


def as_pg(cmd):
    return (["runuser", "-u", "postgres", "--"] + cmd) if os.getuid() == 0 else cmd


class Pg:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="apollo-pg-paired-")
        if os.getuid() == 0:
            shutil.chown(self.dir, "postgres")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        subprocess.run(as_pg([f"{PG_BIN}/initdb", "-D", f"{self.dir}/data", "-A", "trust",
                              "-U", "apollo", "-E", "UTF8", "--no-instructions"]),
                       check=True, stdout=subprocess.DEVNULL, timeout=120)
        subprocess.run(as_pg([f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-l",
                              f"{self.dir}/server.log", "-w", "-t", "60", "-o",
                              f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1",
                              "start"]), check=True, stdout=subprocess.DEVNULL, timeout=90)
        self.n = 0

    def new_url(self):
        self.n += 1
        name = f"paired_{self.n}"
        subprocess.run(["psql", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "apollo",
                        "-d", "postgres", "-c", f"CREATE DATABASE {name}"], check=True,
                       timeout=60)
        return f"postgresql://apollo@127.0.0.1:{self.port}/{name}"

    def stop(self):
        subprocess.run(as_pg([f"{PG_BIN}/pg_ctl", "-D", f"{self.dir}/data", "-m", "fast", "-w",
                              "-t", "60", "stop"]), stdout=subprocess.DEVNULL, timeout=90)
        shutil.rmtree(self.dir, ignore_errors=True)


def run(binary, case, events, url):
    cmd = [binary, "--cases", case, "--events", str(events)]
    if url:
        cmd += ["--url", url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800).stdout
    m = re.search(r"events_per_s=(\d+).*p50_ms=([\d.]+).*cpu_us_per_event=([\d.]+)", out)
    if not m:
        sys.exit(f"no result from {' '.join(cmd)}:\n{out}")
    return int(m.group(1)), float(m.group(2)), float(m.group(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--events", type=int, default=50000)
    ap.add_argument("--cases", default="1:1,100:1,1000:1,1:16,100:4")
    ap.add_argument("--backends", default="sqlite,postgres")
    args = ap.parse_args()
    pg = Pg() if "postgres" in args.backends else None
    try:
        for backend in args.backends.split(","):
            for case in args.cases.split(","):
                ratios, a_rates, b_rates, cpu_ratios = [], [], [], []
                for r in range(args.rounds):
                    order = [("a", args.a), ("b", args.b)]
                    if r % 2:
                        order.reverse()
                    got = {}
                    for name, binary in order:
                        url = pg.new_url() if backend == "postgres" else None
                        got[name] = run(binary, case, args.events, url)
                    a_rates.append(got["a"][0])
                    b_rates.append(got["b"][0])
                    ratios.append(got["b"][0] / got["a"][0])
                    cpu_ratios.append(got["a"][2] / got["b"][2])
                    print(f"  {backend} {case} round {r + 1}: a={got['a'][0]}/s "
                          f"b={got['b'][0]}/s ratio={ratios[-1]:.2f} "
                          f"cpu_us/event a={got['a'][2]} b={got['b'][2]}", flush=True)
                print(f"store={backend} case={case} a_median={statistics.median(a_rates):.0f} "
                      f"b_median={statistics.median(b_rates):.0f} "
                      f"ratio_median={statistics.median(ratios):.2f} "
                      f"ratio_min={min(ratios):.2f} "
                      f"cpu_ratio_median={statistics.median(cpu_ratios):.2f}", flush=True)
    finally:
        if pg:
            pg.stop()


if __name__ == "__main__":
    main()
