#!/usr/bin/env python3
"""Where a benchmark's CPU goes, by process: run a command, and over a window
of its run add up every process's user and system time from /proc.

  scripts/cpu-census.py [--after TEXT] [--delay S] [--seconds S] -- COMMAND...

Starts COMMAND; once a line of its output holds --after (default: start at
once), waits --delay seconds, then reads /proc/*/stat, sleeps --seconds,
reads again, and prints the CPU seconds each process name used in between
(threads are counted in their process), the share of the machine's cores,
and the command's own JSON lines. Example, the throughput scenario on
PostgreSQL:

  scripts/cpu-census.py --after 'scenario throughput' -- \\
      bin/apollo-bench --pg --scenarios throughput --tasks 60000
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import threading
import time

TICK = os.sysconf("SC_CLK_TCK")


def snapshot():
    """pid -> (name, user ticks, system ticks), for every process now."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                text = f.read()
        except OSError:
            continue  # gone meanwhile
        m = re.match(r"\d+ \((.*)\) (.*)", text, re.S)
        if m is None:
            continue
        fields = m.group(2).split()
        out[pid] = (m.group(1), int(fields[11]), int(fields[12]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--after", default="", help="start the window once the output holds this")
    ap.add_argument("--delay", type=float, default=2.0, help="seconds after --after")
    ap.add_argument("--seconds", type=float, default=6.0, help="the window")
    ap.add_argument("--top", type=int, default=6, help="process names to print")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given (put it after --)")

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = threading.Event()
    lines = []

    def reader():
        for line in proc.stdout:
            lines.append(line)
            if args.after in line:
                seen.set()
        seen.set()  # ended without it: do not wait forever

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    if args.after:
        seen.wait()
    if proc.poll() is not None:
        t.join()
        sys.exit(f"cpu-census: the command ended before the window "
                 f"(exit {proc.returncode}):\n" + "".join(lines[-20:]))
    time.sleep(args.delay)
    a = snapshot()
    t0 = time.monotonic()
    time.sleep(args.seconds)
    b = snapshot()
    window = time.monotonic() - t0
    rc = proc.wait()
    t.join()

    used = collections.defaultdict(lambda: [0, 0])
    for pid, (name, user, sys_) in b.items():
        user0, sys0 = a[pid][1:] if pid in a else (0, 0)  # new in the window: all of it
        used[name][0] += user - user0
        used[name][1] += sys_ - sys0
    cores = os.cpu_count() or 1
    print(f"window {window:.1f} s on {cores} cores ({window * cores:.1f} core-seconds)")
    total = 0.0
    for name, (user, sys_) in sorted(used.items(), key=lambda kv: -sum(kv[1]))[:args.top]:
        u, s = user / TICK, sys_ / TICK
        total += u + s
        print(f"  {name:24s} user {u:6.2f} s  sys {s:6.2f} s  "
              f"{100 * (u + s) / (window * cores):5.1f} % of the machine")
    print(f"  {'(these together)':24s} {100 * total / (window * cores):5.1f} % of the machine")
    for line in lines:
        if line.startswith("{"):
            print(line.rstrip())
    sys.exit(rc)


if __name__ == "__main__":
    main()
