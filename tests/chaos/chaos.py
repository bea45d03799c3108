#!/usr/bin/env python3
"""Partition and crash simulator for Apollo-11 (issue 8).

Starts a real orchestrator and N real edge agents (each agent behind its own
port of an in-process fault proxy; with --net netns each agent in its own
network namespace, see netns.py), runs a seeded workload of
tasks whose side effects are counted (each execution appends
"task attempt node" to the node's journal and fsyncs it), injects faults from a
seeded random schedule, lets the system converge, collects the store's view,
the journals and every agent's WAL, and runs checker.py over them.

    chaos.py --bin build/dev/bin [--seed N] [--duration S] [--agents N]
             [--pg] [--nats] [--replicas N] [--lease-ttl S]
             [--net auto|netns|proxy] [--faults K,..] [--tasks K,..]
             [--workdir DIR] [--keep]
             [--env NAME=VALUE ...] [--expect-violation KIND ...]

The seed is printed; the same seed, duration, agent count and backends give
the same fault and workload schedule (the system's own timing still varies).
Exit status: 0 if the checker found no violation (or, with
--expect-violation, if it found every kind named), 1 otherwise, 2 on a
setup error.
Only processes this script started are stopped, by PID.

Network faults (--net): partitions (partition_one, partition_half, storm) are
nft drop rules in the agent's own network namespace with `netns` (real packet
loss: TCP stalls, nothing is closed), or the proxy closing the agent's
connections and refusing new ones with `proxy`. `auto` (default) takes netns
when a namespace can be made (root, iproute2, nftables), else proxy. Delays
come from the proxy in both modes (no sch_netem here).

Several orchestrators (--replicas N, needs --pg; docs/replicas.md): N replicas
r1..rN on the one PostgreSQL store (and the one nats-server), each on its own
port, each reaching the store through its own port of a second proxy; agents
get every replica (through their own proxy port of each), the CLI every
replica. Extra faults, drawn only then: replica_kill (kill -9 of the leader),
replica_pause (SIGSTOP of the leader, 1.5-3 leases), replica_partition (the
leader's store link cut or stalled), replica_slow (every chunk on the
leader's store link held 0.3-0.8 of a lease); orch_kill hits the replica the
schedule drew, leader or not. The checker adds stale_epoch. With one
orchestrator (the default) the run and its schedule are what they were.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402
import failover  # noqa: E402
import netns  # noqa: E402
from netproxy import NetProxy  # noqa: E402

PGBIN = "/usr/lib/postgresql/15/bin"


def log(msg):
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SetupError(Exception):
    pass


# ------------------------------------------------------------- schedule --

ALL_FAULTS = ["agent_kill", "orch_kill", "partition_one", "partition_half", "storm",
              "delay_one", "torn_tail", "clock_skew", "dup_delivery", "store_down",
              "replica_kill", "replica_pause", "replica_partition", "replica_slow"]
# Drawn only with --replicas N > 1 (they need a leader to depose).
REPLICA_FAULTS = ["replica_kill", "replica_pause", "replica_partition", "replica_slow"]


ALL_TASKS = ["simple", "slow", "multi", "flaky", "dag", "cancel", "opretry", "overrun",
             "rollout"]
TASK_WEIGHTS = [30, 15, 12, 12, 12, 10, 9, 6, 8]


def make_schedule(seed, duration, n_agents, pg, only=None, tasks=None, replicas=1, lease_ttl=3.0):
    """Workload and faults, from the seed alone: a list of (t, kind, args).
    `only` narrows the fault kinds, `tasks` the task kinds (default: all).
    With one orchestrator (replicas 1) the schedule is what it always was:
    the replica faults and their draws come only with replicas > 1."""
    rng = random.Random(seed)
    acts = []
    kinds, weights = ALL_TASKS, TASK_WEIGHTS
    if tasks:
        kinds, weights = zip(*[(k, w) for k, w in zip(ALL_TASKS, TASK_WEIGHTS) if k in tasks])
    # Workload: a batch every ~0.7 s until 3 s before the end.
    t, n = 0.5, 0
    while t < duration - 3:
        kind = rng.choices(kinds, weights)[0]
        n += 1
        tid = f"k{seed % 100000}-{n:04d}-{kind}"
        acts.append((t, "submit", {"kind": kind, "id": tid,
                                   "nodes": rng.sample(range(n_agents),
                                                       3 if kind in ("multi", "rollout")
                                                       else 1),
                                   "sleep": rng.choice([0, 0.1, 0.3, 1, 2])}))
        if kind == "cancel":
            acts.append((t + rng.uniform(0.5, 4), "cancel", {"id": tid}))
        if kind == "opretry":
            acts.append((t + rng.uniform(4, 8), "retry", {"id": tid}))
        t += rng.expovariate(1 / 0.7)
    # Faults: Poisson arrivals, a few seconds apart, none in the last 5 s.
    kinds = ["agent_kill", "agent_kill", "orch_kill", "partition_one", "partition_half",
             "delay_one", "torn_tail", "clock_skew", "dup_delivery", "storm"]
    if pg:
        kinds.append("store_down")
    if replicas > 1:
        kinds += REPLICA_FAULTS
    if only:
        kinds = [k for k in kinds if k in only] or sorted(only)
    t = 3.0
    while True:
        t += rng.expovariate(1 / 4.0)
        if t > duration - 5:
            break
        kind = rng.choice(kinds)
        f = {"kind": kind}
        if kind in ("agent_kill", "torn_tail", "partition_one", "delay_one", "clock_skew",
                    "dup_delivery"):
            f["agent"] = rng.randrange(n_agents)
        if kind == "partition_half":
            f["agents"] = sorted(rng.sample(range(n_agents), n_agents // 2))
        if replicas > 1 and kind in ["orch_kill"] + REPLICA_FAULTS:
            # orch_kill: this replica (any role). The replica faults hit the
            # leader the store names when they start; this one only when no
            # leader is known then.
            f["replica"] = rng.randrange(replicas)
        f["hold"] = round(rng.uniform(0.3, 6.0), 2)
        if kind == "replica_pause":
            # Long enough to lose the lease (lease + a follower's next try,
            # + up to 5 s when it was stopped inside a transaction holding
            # the lease row's share lock): it must step down when resumed.
            f["hold"] = round(lease_ttl * rng.uniform(1.5, 3.0), 2)
        if kind == "replica_partition":
            # Some shorter than the lease (the leader keeps it), most longer.
            f["hold"] = round(lease_ttl * rng.uniform(0.5, 3.0), 2)
            f["mode"] = rng.choice(["cut", "stall"])
        if kind == "replica_slow":
            # Every chunk on the store link held a third of the lease or
            # more: renewals commit late, the lease lapses between them, and
            # the leader learns it was replaced only at its next renewal.
            f["hold"] = round(lease_ttl * rng.uniform(1.5, 3.0), 2)
            f["ms"] = round(lease_ttl * 1000 * rng.uniform(0.3, 0.8))
        if kind == "delay_one":
            f["ms"] = rng.choice([200, 1000, 2500])
        if kind == "clock_skew":
            f["offset_s"] = rng.choice([-600, -120, 120, 600])
        if kind == "torn_tail":
            f["bytes"] = rng.randrange(1, 200)
            f["junk"] = rng.randrange(1 << 30)
        acts.append((t, "fault", f))
    acts.sort(key=lambda a: a[0])
    return acts


# -------------------------------------------------------------- cluster --

class Cluster:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.bin = args.bin
        # The center may come from elsewhere (the shipped bin/ beside the
        # test build's agents: tests/CMakeLists.txt chaos_shipped_*).
        self.orch_bin = getattr(args, "orchestrator_bin", None) or (args.bin + "/orchestrator")
        self.env = dict(os.environ)
        for kv in args.env:
            k, _, v = kv.partition("=")
            self.env[k] = v
        # The orchestrator(s): one, or with --replicas N replicas r1..rN on
        # the one PostgreSQL store, each on its own port (docs/replicas.md).
        self.replicas = getattr(args, "replicas", 1)
        self.replica_ids = [f"r{r + 1}" for r in range(self.replicas)]
        self.orchs = [None] * self.replicas
        self.orch_ports = ([None] if self.replicas == 1
                           else [free_port() for _ in range(self.replicas)])
        self.orch_wanted = [True] * self.replicas
        self.orch_spawned_at = [0.0] * self.replicas
        self.orch_restarts = 0
        self.paused = {}      # replica -> the process SIGSTOPped (replica_pause)
        self.store_cut = {}   # replica -> "cut" or "stall" (replica_partition)
        self.pg_proxy = None  # with --replicas: a port per replica in front of PostgreSQL
        self._leader = (0.0, None)  # (when asked, replica index) for node_list
        self.agents = [None] * args.agents
        self.agent_knobs = [[] for _ in range(args.agents)]  # hidden test flags
        self.names = [f"n{i:02d}" for i in range(args.agents)]
        self.proxies = []  # one NetProxy per replica (agents dial every one)
        self.fabric = None  # netns.NetnsFabric with --net netns
        self.pg_dir = None
        self.pg_port = None
        self.nats = None
        self.nats_port = None
        self.store_url = f"sqlite://{work}/apollo.db"
        self.bus_url = "embedded"
        self.journal_dir = os.path.join(work, "journal")
        os.makedirs(self.journal_dir)

    # backends
    def start_pg(self):
        if not os.path.exists(PGBIN + "/initdb"):
            raise SetupError("PostgreSQL 15 not installed (apt-get install postgresql)")
        self.pg_dir = os.path.join(self.work, "pg")
        os.makedirs(self.pg_dir)
        shutil.chown(self.pg_dir, "postgres") if os.geteuid() == 0 else None
        self.pg_port = free_port()
        rc = self._pg(["initdb", "-D", self.pg_dir + "/data", "-A", "trust", "-U", "apollo",
                       "-E", "UTF8"])
        if rc != 0:
            raise SetupError(f"initdb failed, see {self.pg_dir}/pg.log")
        self.pg_start()
        self.store_url = f"postgresql://apollo@127.0.0.1:{self.pg_port}/postgres"
        if self.replicas > 1:
            # Each replica reaches the store through its own port of a fault
            # proxy, so one replica alone can be cut off (replica_partition).
            self.pg_proxy = NetProxy(self.pg_port, self.replicas)
            self.pg_proxy.start()

    def _pg(self, argv):
        cmd = [PGBIN + "/" + argv[0]] + argv[1:]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        with open(os.path.join(self.work, "pg.log"), "a") as out:
            return subprocess.call(cmd, stdout=out, stderr=out, timeout=120)

    def pg_start(self):
        rc = self._pg(["pg_ctl", "-D", self.pg_dir + "/data", "-l", self.pg_dir + "/server.log",
                       "-w", "-t", "60", "start", "-o",
                       f"-p {self.pg_port} -k {self.pg_dir} -c listen_addresses=127.0.0.1"])
        if rc != 0:
            raise SetupError("pg_ctl start failed")

    def pg_stop(self, mode="immediate"):
        self._pg(["pg_ctl", "-D", self.pg_dir + "/data", "-m", mode, "-w", "-t", "60", "stop"])

    def start_nats(self):
        exe = shutil.which("nats-server")
        if not exe:
            raise SetupError("nats-server not installed (apt-get install nats-server)")
        self.nats_port = free_port()
        d = os.path.join(self.work, "nats")
        os.makedirs(d)
        self.nats = subprocess.Popen([exe, "-js", "-sd", d + "/js", "-a", "127.0.0.1", "-p",
                                      str(self.nats_port), "-l", d + "/nats.log"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.nats_port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise SetupError("nats-server did not start listening")
        self.bus_url = f"nats://127.0.0.1:{self.nats_port}"

    # orchestrator
    def write_configs(self):
        with open(os.path.join(self.work, "orchestrator.yaml"), "w") as f:
            f.write(f"dispatch_interval: 1\nack_timeout: {self.args.ack_timeout:g}\nheartbeat_interval: 2\n"
                    "suspect_after: 6\nlost_after: 12\n"
                    # The workload fails on purpose (flaky, operator-retry tasks);
                    # a paused intent would only stretch the convergence wait.
                    "circuit_breaker: {failures: 1000, cool_down: 1}\n"
                    "retry_budget: {rate_per_s: 1000, burst: 1000}\n"
                    + (f"replication: {{lease_ttl: {self.args.lease_ttl:g}}}\n"
                       if self.replicas > 1 else ""))
        with open(os.path.join(self.work, "agent.yaml"), "w") as f:
            f.write("heartbeat_interval: 2\nmax_concurrency: 4\nkill_grace: 1\n"
                    "enabled_intents: [exec, noop, sleep]\n"
                    "reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}\n")

    @property
    def orch(self):
        """The orchestrator (replica r1 with --replicas)."""
        return self.orchs[0]

    @property
    def orch_port(self):
        return self.orch_ports[0]

    def orch_log(self, r):
        return os.path.join(self.work, "orchestrator.log" if self.replicas == 1
                            else f"orchestrator-{self.replica_ids[r]}.log")

    def store_url_of(self, r):
        if self.pg_proxy:
            return f"postgresql://apollo@127.0.0.1:{self.pg_proxy.ports[r]}/postgres"
        return self.store_url

    def orch_argv(self, r):
        argv = [self.orch_bin, "--listen", f"127.0.0.1:{self.orch_ports[r] or 0}", "--store",
                self.store_url_of(r), "--bus", self.bus_url, "--config",
                os.path.join(self.work, "orchestrator.yaml")]
        if self.replicas > 1:
            argv += ["--replica-id", self.replica_ids[r], "--advertise",
                     f"127.0.0.1:{self.orch_ports[r]}", "--http-listen", "off",
                     "--log-format", "json"]  # with times: who led when
        return argv

    def orch_alive(self, r):
        p = self.orchs[r]
        return p is not None and p.poll() is None

    def start_orch(self, r=0):
        logf = open(self.orch_log(r), "a")
        self.orchs[r] = subprocess.Popen(self.orch_argv(r), stdout=logf, stderr=logf,
                                         env=self.env)
        logf.close()
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.orchs[r].poll() is not None:
                # A restart can find the old port in TIME_WAIT or the store
                # briefly down: try again, bounded.
                return False
            if self.orch_ports[r] is None:
                with open(self.orch_log(r)) as f:
                    m = re.findall(r"listening on 127\.0\.0\.1:(\d+)", f.read())
                    if m:
                        self.orch_ports[r] = int(m[-1])
            if self.orch_ports[r]:
                try:
                    socket.create_connection(("127.0.0.1", self.orch_ports[r]), 0.2).close()
                    return True
                except OSError:
                    pass
            time.sleep(0.1)
        return False

    def ensure_orch(self):
        for r in range(self.replicas):
            for _ in range(30):
                if self.orch_alive(r):
                    break
                if self.start_orch(r):
                    break
                time.sleep(1)
            else:
                raise SetupError(f"the orchestrator does not start; see {self.orch_log(r)}")

    def supervise_orch(self):
        """Like a process supervisor: an orchestrator (each replica) that is
        wanted but not running (it exits when it cannot open the store) is
        started again, at most once a second. Non-blocking. (A deposed
        leader restarts itself in place, same pid: nothing to do here.)"""
        for r in range(self.replicas):
            if not self.orch_wanted[r] or self.orch_alive(r):
                continue
            if time.time() - self.orch_spawned_at[r] < 1.0:
                continue
            if self.orchs[r] is not None:
                self.orch_restarts += 1
            self.orch_spawned_at[r] = time.time()
            logf = open(self.orch_log(r), "a")
            self.orchs[r] = subprocess.Popen(self.orch_argv(r), stdout=logf, stderr=logf,
                                             env=self.env)
            logf.close()

    def kill_orch(self, r=0):
        if self.orch_alive(r):
            self.orchs[r].kill()  # SIGKILL ends a stopped process too
            self.orchs[r].wait()
        self.orchs[r] = None
        self.paused.pop(r, None)

    def pause_orch(self, r):
        """SIGSTOP replica r (a long GC-like pause). False if it is not running."""
        if not self.orch_alive(r) or r in self.paused:
            return False
        self.orchs[r].send_signal(signal.SIGSTOP)
        self.paused[r] = self.orchs[r]
        return True

    def resume_orch(self, r):
        p = self.paused.pop(r, None)
        if p is not None and p.poll() is None:
            p.send_signal(signal.SIGCONT)

    def cut_store(self, r, mode, ms=0):
        """Replica r cut off from PostgreSQL: its connections closed and new
        ones refused (cut), or nothing forwarded either way (stall); or its
        link slowed, every chunk held `ms` (slow)."""
        self.store_cut[r] = mode
        if mode == "cut":
            self.pg_proxy.partition(r)
        elif mode == "stall":
            self.pg_proxy.stall(r)
        else:
            self.pg_proxy.set_delay(r, ms)

    def heal_store(self, r):
        self.store_cut.pop(r, None)
        self.pg_proxy.set_delay(r, 0)
        self.pg_proxy.heal(r)

    def up(self):
        """True while an orchestrator can answer the CLI: one that runs, is
        not stopped and not cut off from the store."""
        return any(self.orch_alive(r) and r not in self.paused and r not in self.store_cut
                   for r in range(self.replicas))

    def faulted(self, r):
        """Replica r is stopped or cut off from the store by this run."""
        return r in self.paused or r in self.store_cut

    def servers(self):
        """--server for apollo-cli: every replica (killed ones too: the CLI
        fails over from a refused connection at once) but those this run
        stopped or whose store link it stalls: a call there is accepted and
        never answered, which costs the CLI its whole deadline (10 s) and
        the driver, single-threaded, its schedule (a slowed store link: as
        bad). A replica cut off from the store comes last (it answers with
        an error)."""
        order = sorted((r for r in range(self.replicas)
                        if r not in self.paused and self.store_cut.get(r) in (None, "cut")),
                       key=lambda r: (self.faulted(r), r))
        return ",".join(f"127.0.0.1:{self.orch_ports[r]}" for r in order)

    def lease(self):
        """The leader lease as the store has it (cluster status), asked of
        the replicas this run left alone only, briefly: the driver must not
        wait on a stopped replica. None when none answers."""
        ok = [r for r in range(self.replicas) if self.orch_alive(r) and not self.faulted(r)]
        if not ok:
            return None
        rc, so, _ = self.cli("-o", "json", "cluster", "status", timeout=8, deadline=3,
                             servers=",".join(f"127.0.0.1:{self.orch_ports[r]}" for r in ok))
        if rc != 0:
            return None
        return next((lease for lease in json.loads(so).get("leases", [])
                     if lease["name"] == "leader"), None)

    def leader(self):
        """The replica holding the leader lease by the store (an unexpired
        lease), or None. Always 0 with one orchestrator."""
        if self.replicas == 1:
            return 0
        lease = self.lease()
        r = None
        if lease and not lease["expired"] and lease["holder"] in self.replica_ids:
            r = self.replica_ids.index(lease["holder"])
        self._leader = (time.time(), r)
        return r

    def leader_epoch(self):
        lease = self.lease()
        return lease["epoch"] if lease else None

    def node_list(self, timeout=20):
        """`node list` as the center sees it. With replicas only the leader
        holds the agents' sessions (a follower shows every node
        disconnected): asked of the lease holder alone (known for 1 s)."""
        if self.replicas == 1:
            return self.cli("-o", "json", "node", "list", timeout=timeout)
        at, r = self._leader
        if time.time() - at > 1.0:
            r = self.leader()
        if r is None or self.faulted(r) or not self.orch_alive(r):
            return 1, "", "no leader"
        return self.cli("-o", "json", "node", "list", timeout=timeout,
                        deadline=min(10, timeout), servers=f"127.0.0.1:{self.orch_ports[r]}")

    # agents
    def agent_dir(self, i):
        return os.path.join(self.work, self.names[i])

    def start_agent(self, i):
        if self.agents[i] and self.agents[i].poll() is None:
            return
        logf = open(os.path.join(self.work, self.names[i] + ".log"), "a")
        argv = [self.bin + "/edge-agent", "--config", os.path.join(self.work, "agent.yaml"),
                "--node-id", self.names[i], "--orchestrator",
                ",".join(f"{p.hosts[i]}:{p.ports[i]}" for p in self.proxies),
                "--state-dir", self.agent_dir(i),
                "--wal-path", os.path.join(self.agent_dir(i), "wal"),
                "--label", "fleet=chaos"]
        argv += self.agent_knobs[i]
        if self.fabric:
            argv = self.fabric.wrap(i, argv)  # `ip netns exec` execs: the pid is the agent's
        self.agents[i] = subprocess.Popen(argv, stdout=logf, stderr=logf, env=self.env)
        logf.close()

    def kill_agent(self, i):
        p = self.agents[i]
        if p and p.poll() is None:
            p.kill()
            p.wait()

    def stop_agent(self, i):
        p = self.agents[i]
        if p and p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    # network
    def start_net(self, mode):
        """The agents' links: namespaces (netns) or loopback, and the proxy."""
        hosts = None
        if mode == "netns":
            self.fabric = netns.NetnsFabric(self.args.agents)
            try:
                stale = self.fabric.setup()
            except (netns.NetnsError, OSError, subprocess.TimeoutExpired) as e:
                raise SetupError(f"network namespaces: {e}")
            if stale:
                log(f"removed {len(stale)} namespace(s)/link(s) left by dead chaos runs: "
                    f"{', '.join(stale[:5])}{' ...' if len(stale) > 5 else ''}")
            hosts = self.fabric.host_addr
        # One proxy per replica: agent i dials its own port of each.
        for r in range(self.replicas):
            self.proxies.append(NetProxy(self.orch_ports[r], self.args.agents, hosts))
            self.proxies[-1].start()

    @property
    def proxy(self):
        return self.proxies[0]

    def partition(self, i):
        if self.fabric:
            self.fabric.partition(i)
        else:
            for p in self.proxies:
                p.partition(i)

    def heal(self, i):
        if self.fabric:
            self.fabric.heal(i)
        else:
            for p in self.proxies:
                p.heal(i)

    def set_delay(self, i, ms):
        for p in self.proxies:
            p.set_delay(i, ms)

    def shows_connected(self, i):
        """True if the center's node list shows agent i connected now."""
        if not self.up():
            return False
        rc, so, _ = self.node_list(timeout=5)
        return rc == 0 and any(n["node_id"] == self.names[i] and n["connected"]
                               for n in json.loads(so)["nodes"])

    def cli(self, *argv, timeout=20, servers=None, deadline=10):
        try:
            r = subprocess.run([self.bin + "/apollo-cli", "--server",
                                servers or (f"127.0.0.1:{self.orch_port}" if self.replicas == 1
                                            else self.servers()),
                                "--timeout", f"{deadline:g}"] + list(argv),
                               capture_output=True, text=True, timeout=timeout)
            return r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired:
            return 124, "", "timed out"

    def shutdown(self):
        for i in range(len(self.agents)):
            self.kill_agent(i)
        for r in range(self.replicas):
            self.kill_orch(r)
        if self.nats and self.nats.poll() is None:
            self.nats.kill()
            self.nats.wait()
        if self.pg_dir and os.path.exists(self.pg_dir + "/data/postmaster.pid"):
            self.pg_stop("fast")
        if self.fabric:
            self.fabric.cleanup()


# ------------------------------------------------------------- workload --

def task_docs(c, act):
    """The task(s) of one submit action, as dicts (written as JSON, which the
    YAML task-file parser reads)."""
    kind, tid, sleep = act["kind"], act["id"], act["sleep"]
    nodes = [c.names[i] for i in act["nodes"]]
    journal = (f"printf '%s %s %s\\n' \"$APOLLO_TASK_ID\" \"$APOLLO_ATTEMPT\" \"$APOLLO_NODE_ID\""
               f" >> {c.journal_dir}/$APOLLO_NODE_ID && sync {c.journal_dir}/$APOLLO_NODE_ID")
    retry = {"max_retries": 2, "initial_interval": 1, "max_interval": 1, "backoff": "fixed"}

    def doc(task_id, script, nodes=nodes, retry=retry, timeout=60, deps=None, rollout=None):
        d = {"task_id": task_id, "intent": "exec",
             "target_selector": {"type": "nodes", "nodes": nodes},
             "timeout": timeout, "retry_policy": retry,
             "params": {"argv": ["sh", "-c", script]}}
        if deps:
            d["depends_on"] = deps
        if rollout:
            d["rollout"] = rollout
        return d

    if kind in ("simple", "multi"):
        return [doc(tid, f"{journal}; sleep {sleep}")]
    if kind == "slow":
        return [doc(tid, f"{journal}; sleep {2 + sleep * 2}")]
    if kind == "flaky":  # fails its first attempt, succeeds on the retry
        return [doc(tid, f"{journal}; sleep {sleep}; [ \"$APOLLO_ATTEMPT\" -ge 2 ] || exit 3")]
    if kind == "dag":  # a chain of three on the same node
        return [doc(tid + "-a", f"{journal}; sleep {sleep}"),
                doc(tid + "-b", f"{journal}; sleep {sleep}", deps=[tid + "-a"]),
                doc(tid + "-c", f"{journal}", deps=[tid + "-b"])]
    if kind == "cancel":  # long enough to be cancelled while it runs
        return [doc(tid, f"{journal}; sleep 15")]
    if kind == "overrun":  # attempt 1 runs past its 2 s timeout; the retry is quick
        return [doc(tid, f"{journal}; [ \"$APOLLO_ATTEMPT\" -ge 2 ] || sleep 5", timeout=2)]
    if kind == "rollout":  # one node at a time; kills land mid-batch (checker: rollout_order)
        return [doc(tid, f"{journal}; sleep {sleep}",
                    rollout={"batch_size": 1, "max_failures": len(nodes), "on_breach": "pause"})]
    if kind == "opretry":  # fails with no retry left; the operator grants one
        return [doc(tid, f"{journal}; [ \"$APOLLO_ATTEMPT\" -ge 2 ] || exit 4",
                    retry={"max_retries": 0, "initial_interval": 1, "max_interval": 1,
                           "backoff": "fixed"})]
    raise ValueError(kind)


# ---------------------------------------------------------------- faults --

class Faults:
    """Starts faults and ends them when their hold time is up."""

    def __init__(self, c, rng):
        self.c = c
        self.rng = rng
        self.pending_ends = []  # (time, fn, description)
        self.counts = {}
        self.last_fault_end = 0.0
        self.half_cut = set()
        self.one_cut = set()
        self.store_down = False
        self.storm_healed_at = None
        self.storm_reconnect_s = []
        # partition_one: agent -> when it was cut, while the center still
        # shows it connected; then the seconds it took the center to show it
        # disconnected (None: the partition healed first).
        self.watch = {}
        self.noticed_s = []
        self.watch_polled = 0.0
        # replica_pause: (replica, lease epoch when stopped, when resumed,
        # the replica's log size when stopped) of each pause, for the
        # step-down figures at the end.
        self.pauses = []
        # (kind, replica id, when) of each replica fault that hit the
        # leader, for the failover times at the end (failover.py).
        self.leader_hits = []

    def count(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def later(self, at, fn):
        self.pending_ends.append((at, fn))

    def tick(self, now):
        due = [e for e in self.pending_ends if e[0] <= now]
        self.pending_ends = [e for e in self.pending_ends if e[0] > now]
        for _, fn in sorted(due, key=lambda e: e[0]):
            fn()
            self.last_fault_end = time.time()

    def start(self, f, now):
        c = self.c
        kind, hold = f["kind"], f["hold"]
        self.count(kind)
        log(f"fault {kind} {json.dumps({k: v for k, v in f.items() if k not in ('kind',)})}")
        if kind == "agent_kill":
            i = f["agent"]
            c.kill_agent(i)
            self.later(now + hold, lambda: c.start_agent(i))
        elif kind == "torn_tail":
            i = f["agent"]
            c.kill_agent(i)
            tear_wal_tail(os.path.join(c.agent_dir(i), "wal"), f["bytes"], f["junk"])
            self.later(now + hold, lambda: c.start_agent(i))
        elif kind in ("clock_skew", "dup_delivery"):
            # Restarted (kill -9) with the knob, and again without it later.
            i = f["agent"]
            c.kill_agent(i)
            c.agent_knobs[i] = (["--test-clock-offset-s", str(f["offset_s"])]
                                if kind == "clock_skew" else ["--test-duplicate-delivery"])
            c.start_agent(i)

            def restore(i=i):
                c.kill_agent(i)
                c.agent_knobs[i] = []
                c.start_agent(i)
            self.later(now + hold * 3, restore)
        elif kind in ("orch_kill", "replica_kill"):
            # orch_kill: the one orchestrator, or with replicas the one the
            # schedule drew (leader or not); replica_kill: the leader.
            r = self.target(f)[0] if kind == "replica_kill" else f.get("replica", 0)
            c.kill_orch(r)
            self.watch.clear()  # every node shows disconnected now, partitioned or not
            c.orch_wanted[r] = False

            def want(r=r):
                c.orch_wanted[r] = True
                c.orch_spawned_at[r] = 0.0
                c.supervise_orch()
            self.later(now + hold, want)
        elif kind == "replica_pause":
            r, led = self.target(f)
            epoch = c.leader_epoch() if led else None
            if not c.pause_orch(r):
                log(f"replica_pause: {c.replica_ids[r]} is not running or already stopped: "
                    "nothing paused")
            else:
                self.watch.clear()
                offset = os.path.getsize(c.orch_log(r))

                def cont(r=r, led=led, epoch=epoch, offset=offset, at=time.time()):
                    c.resume_orch(r)
                    if not led:
                        log(f"replica_pause: {c.replica_ids[r]} (not the leader) resumed after "
                            f"{time.time() - at:.1f} s")
                        return
                    after = c.leader_epoch()
                    self.pauses.append((r, epoch, after, offset))
                    log(f"replica_pause: {c.replica_ids[r]} resumed after "
                        f"{time.time() - at:.1f} s; lease epoch {epoch} when stopped, {after} now"
                        + ("" if after is None else
                           ": it must step down" if after != epoch else ": it kept the lease"))
                self.later(now + hold, cont)
        elif kind in ("replica_partition", "replica_slow"):
            r = self.target(f)[0]
            if r in c.store_cut:
                log(f"{kind}: {c.replica_ids[r]}'s store link is already cut, stalled or slowed")
            else:
                self.watch.clear()
                c.cut_store(r, f.get("mode", "slow"), f.get("ms", 0))
                self.later(now + hold, lambda r=r: c.heal_store(r))
        elif kind == "partition_one":
            i = f["agent"]
            if i not in self.one_cut and i not in self.half_cut and c.shows_connected(i):
                self.watch[i] = time.time()
            c.partition(i)
            self.one_cut.add(i)

            def heal(i=i):
                self.one_cut.discard(i)
                if self.watch.pop(i, None) is not None:
                    self.noticed_s.append(None)
                if i not in self.half_cut:
                    c.heal(i)
            self.later(now + hold, heal)
        elif kind == "partition_half":
            for i in f["agents"]:
                c.partition(i)
                self.half_cut.add(i)

            def heal_half(agents=f["agents"]):
                for i in agents:
                    self.half_cut.discard(i)
                    if i not in self.one_cut:
                        c.heal(i)
            self.later(now + hold, heal_half)
        elif kind == "storm":
            # Reconnect storm: the whole fleet cut off, then let back at once.
            for i in range(len(c.names)):
                c.partition(i)
                self.half_cut.add(i)

            def let_back():
                for i in range(len(c.names)):
                    self.half_cut.discard(i)
                    if i not in self.one_cut:
                        c.heal(i)
                self.storm_healed_at = time.time()
            self.later(now + hold, let_back)
        elif kind == "delay_one":
            i = f["agent"]
            c.set_delay(i, f["ms"])
            self.later(now + hold, lambda: c.set_delay(i, 0))
        elif kind == "store_down":
            if not self.store_down:
                self.store_down = True
                c.pg_stop("immediate")

                def up():
                    c.pg_start()
                    self.store_down = False
                self.later(now + hold, up)
        self.last_fault_end = max(self.last_fault_end, time.time())

    def target(self, f):
        """The replica a replica fault hits: the leader the store names now,
        else (no lease held: a handover under way; or the holder is one this
        run already stopped, killed or cut off) the schedule's pick.
        Returns (replica, whether it is the leader)."""
        c = self.c
        r = c.leader()
        if r is not None and c.orch_alive(r) and not c.faulted(r):
            log(f"{f['kind']}: the leader is {c.replica_ids[r]}")
            self.leader_hits.append((f["kind"], c.replica_ids[r], time.time()))
            return r, True
        why = ("no leader known now" if r is None else
               f"the lease holder {c.replica_ids[r]} is already down, stopped or cut off")
        log(f"{f['kind']}: {why}; hitting {c.replica_ids[f['replica']]} (the schedule's pick)")
        return f["replica"], False

    def end_all(self):
        for _, fn in sorted(self.pending_ends, key=lambda e: e[0]):
            fn()
        self.pending_ends = []
        self.last_fault_end = time.time()


def wal_log_end(data):
    """Where the records of a segment's bytes end: the agent keeps zeros
    written past the log's end (docs/wal_format.md, preallocation), so the
    file's end is not the log's. Walks the record headers (length at offset
    4, a non-zero type at 8); a zero type is the preallocated space."""
    pos = 0
    while pos + 24 <= len(data):
        length = int.from_bytes(data[pos + 4:pos + 8], "little")
        if data[pos + 8] == 0 or pos + 24 + length > len(data):
            break
        pos += 24 + length
    return pos


def tear_wal_tail(wal_dir, nbytes, junk_seed):
    """A torn tail: the last write of a dead process only partly on disk.
    Writes a partial record (a valid-looking prefix of garbage) where the
    newest segment's log ends, over its preallocated zeros (or past the end
    of the file); nothing acknowledged is touched, so recovery must truncate
    it and lose nothing."""
    try:
        segs = sorted(f for f in os.listdir(wal_dir) if f.startswith("wal-") and f.endswith(".log"))
    except FileNotFoundError:
        return
    if not segs:
        return
    junk = random.Random(junk_seed).randbytes(nbytes)
    with open(os.path.join(wal_dir, segs[-1]), "r+b") as f:
        f.seek(wal_log_end(f.read()))
        f.write(junk)
        f.flush()
        os.fsync(f.fileno())


# ------------------------------------------------------------------ run --

SETTLED = {"SUCCEEDED", "CANCELLED", "FAILED", "TIMEOUT"}


def node_settled(n, max_retries):
    """SUCCEEDED or CANCELLED, or FAILED/TIMEOUT with no retry left, or held
    for good with a reason (blocked_reason upstream_failed: a dependency
    did not succeed). Other reasons (node_disconnected, backoff, ...) are
    waits, not explanations."""
    if n["status"] in ("SUCCEEDED", "CANCELLED") or n.get("blocked_reason", "").startswith("upstream_failed"):
        return True
    return n["status"] in ("FAILED", "TIMEOUT") and n["retries"] >= max_retries


def list_tasks(c):
    """{task_id: status} of every task in the store, or None if unreachable."""
    out, token = {}, ""
    for _ in range(1000):
        argv = ["-o", "json", "task", "list", "--limit", "1000"]
        if token:
            argv += ["--page-token", token]
        rc, so, _ = c.cli(*argv)
        if rc != 0:
            return None
        j = json.loads(so)
        for t in j["tasks"]:
            out[t["task_id"]] = t["status"]
        token = j.get("next_page_token", "")
        if not token:
            return out
    return out


def unsettled(c, statuses, accepted):
    """Tasks that are neither settled nor blocked with a reason."""
    left = []
    for tid, st in statuses.items():
        if st in ("SUCCEEDED", "CANCELLED"):
            continue
        rc, so, _ = c.cli("-o", "json", "task", "status", "--task-id", tid)
        if rc != 0:
            left.append(tid)
            continue
        nodes = json.loads(so)["nodes"]
        max_retries = accepted.get(tid, {}).get("max_retries", 0)
        if not all(node_settled(n, max_retries) for n in nodes):
            left.append(tid)
    return left


def replica_figures(c, faults, work):
    """With replicas, after convergence: who leads, how often each replica
    stepped down, whether every pause that cost the leader its lease ended
    in a step-down; cluster status and the leases table kept in the run dir
    (evidence when a run fails)."""
    rc, so, _ = c.cli("-o", "json", "cluster", "status", timeout=20)
    if rc == 0:
        with open(os.path.join(work, "cluster.json"), "w") as f:
            f.write(so)
    if c.pg_port:
        with open(os.path.join(work, "leases.txt"), "w") as f:
            subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(c.pg_port), "-U", "apollo",
                            "-d", "postgres", "-c", "SELECT * FROM leases",
                            "-c", "SELECT * FROM replicas",
                            "-c", "SELECT epoch, count(*), min(hist_id), max(hist_id) "
                                  "FROM history GROUP BY epoch ORDER BY epoch"],
                           stdout=f, stderr=subprocess.STDOUT, timeout=30)
    step_downs = {}
    for r, rid in enumerate(c.replica_ids):
        with open(c.orch_log(r), errors="replace") as f:
            step_downs[rid] = f.read().count("stepping down")
    lost, stepped, missed = 0, 0, []
    for r, before, after, offset in faults.pauses:
        if before is None or after is None or after == before:
            continue  # it kept the lease (or the epoch was not known)
        lost += 1
        with open(c.orch_log(r), errors="replace") as f:
            f.seek(offset)
            rest = f.read()
        if "stepping down" in rest:
            stepped += 1
        elif "listening on" not in rest:  # (not killed and started again meanwhile)
            missed.append(c.replica_ids[r])
    timed = failover.failovers(faults.leader_hits, failover.leader_changes(work))
    for line in failover.summary(timed):
        log(f"failover: {line}")
    leader, epoch = c.leader(), c.leader_epoch()
    log(f"replicas: leader {c.replica_ids[leader] if leader is not None else 'NONE'} at epoch "
        f"{epoch}; step-downs {step_downs}; paused leaders that lost the lease: {lost}, "
        f"stepped down: {stepped}" + (f"; did NOT step down: {missed}" if missed else ""))
    return {"leader": c.replica_ids[leader] if leader is not None else None, "epoch": epoch,
            "step_downs": step_downs, "pauses_lost_lease": lost, "pauses_stepped_down": stepped,
            "pauses_not_stepped_down": missed, "leader_hits": faults.leader_hits,
            "failover_s": [t[3] for t in timed]}


def choose_net(want):
    """'netns' or 'proxy' for --net WANT, and the line saying which and why;
    None for the mode if netns was asked for and cannot be had."""
    if want == "proxy":
        return "proxy", "network faults: proxy (asked for with --net proxy)"
    ok, why = netns.probe()
    if ok:
        return "netns", (f"network faults: netns (each agent in its own network namespace; "
                         f"partitions are nft drop rules){' (auto)' if want == 'auto' else ''}")
    if want == "netns":
        return None, f"network faults: --net netns is not available here: {why}"
    return "proxy", (f"network faults: proxy (auto: network namespaces not available: {why}; "
                     "partitions close the agent's connections instead of dropping packets)")


def run(args):
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    backend = ("postgresql" if args.pg else "sqlite") + "+" + ("nats" if args.nats else "embedded")
    net, why = choose_net(args.net)
    log(why)
    if net is None:
        return 2
    log(f"seed {seed}  duration {args.duration}s  agents {args.agents}  backend {backend}"
        f"  net {net}  (replay: --seed {seed} --duration {args.duration} --agents {args.agents}"
        f"{' --pg' if args.pg else ''}{' --nats' if args.nats else ''} --net {net}"
        f"{' --faults ' + args.faults if args.faults else ''}"
        f"{' --tasks ' + args.tasks if args.tasks else ''}"
        + (f" --replicas {args.replicas} --lease-ttl {args.lease_ttl:g}" if args.replicas > 1
           else "") + ")")
    work = args.workdir or tempfile.mkdtemp(prefix="apollo-chaos.")
    os.makedirs(work, exist_ok=True)
    if os.geteuid() == 0:
        os.chmod(work, 0o755)
    log(f"state in {work}")
    only = set(args.faults.split(",")) if args.faults else None
    tasks = set(args.tasks.split(",")) if args.tasks else None
    schedule = make_schedule(seed, args.duration, args.agents, args.pg, only, tasks,
                             args.replicas, args.lease_ttl)
    with open(os.path.join(work, "schedule.json"), "w") as f:
        json.dump({"seed": seed, "duration": args.duration, "agents": args.agents,
                   "backend": backend, "net": net, "actions": schedule}
                  | ({"replicas": args.replicas, "lease_ttl": args.lease_ttl}
                     if args.replicas > 1 else {}), f, indent=1)

    c = Cluster(args, work)
    rc = 2
    try:
        if args.pg:
            c.start_pg()
        if args.nats:
            c.start_nats()
        c.write_configs()
        c.ensure_orch()
        c.start_net(net)
        for i in range(args.agents):
            c.start_agent(i)
        # Wait (bounded) for the fleet to register before the clock starts.
        deadline = time.time() + 60
        while time.time() < deadline:
            rc_, so, _ = c.node_list()
            if rc_ == 0 and sum(1 for n in json.loads(so)["nodes"] if n["connected"]) == args.agents:
                break
            time.sleep(0.3)
        else:
            raise SetupError("the agents did not all connect within 60 s")
        rc = drive(c, schedule, seed, args, work)
    except SetupError as e:
        log(f"setup error: {e}")
        rc = 2
    except KeyboardInterrupt:
        log("interrupted: stopping every process this run started")
        rc = 130
    finally:
        # A second SIGTERM must not cut the cleanup short (it is bounded).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        c.shutdown()
        if rc == 0 and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"state kept in {work}")
    return rc


def drive(c, schedule, seed, args, work):
    rng = random.Random(seed ^ 0x5eed)
    faults = Faults(c, rng)
    accepted = {}   # task_id -> {"kind", "nodes", "group"}
    cancels = {}    # task_id -> True if the cancel was acknowledged
    retries = {}    # task_id -> operator retries acknowledged
    queue = list(schedule)
    t0 = time.time()
    end = t0 + args.duration
    retry_q = []  # (due, action) for CLI calls that failed (center down)
    while time.time() < end + 30 and (queue or retry_q or time.time() < end):
        now = time.time() - t0
        faults.tick(now)
        c.supervise_orch()
        if faults.watch and c.up() and time.time() - faults.watch_polled > 0.5:
            faults.watch_polled = time.time()
            rc_, so, _ = c.node_list(timeout=5)
            if rc_ == 0:
                for n in json.loads(so)["nodes"]:
                    i = c.names.index(n["node_id"]) if n["node_id"] in c.names else None
                    if i in faults.watch and not n["connected"]:
                        faults.noticed_s.append(round(time.time() - faults.watch.pop(i), 2))
                        log(f"partition_one: the center shows {n['node_id']} disconnected "
                            f"{faults.noticed_s[-1]} s after the cut")
        if faults.storm_healed_at and c.up():
            rc_, so, _ = c.node_list(timeout=5)
            if rc_ == 0 and all(n["connected"] for n in json.loads(so)["nodes"]):
                faults.storm_reconnect_s.append(round(time.time() - faults.storm_healed_at, 2))
                log(f"storm: all {args.agents} agents back in {faults.storm_reconnect_s[-1]} s")
                faults.storm_healed_at = None
        due = []
        while queue and queue[0][0] <= now:
            due.append(queue.pop(0))
        for r in [r for r in retry_q if r[0] <= now]:
            retry_q.remove(r)
            due.append(r)
        for _, what, a in due:
            if what == "fault":
                faults.start(a, now)
                continue
            if not c.up() or faults.store_down:
                retry_q.append((now + 1, what, a))
                continue
            if what == "submit":
                docs = task_docs(c, a)
                path = os.path.join(work, "tasks", a["id"] + ".yaml")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    json.dump({"tasks": docs}, f)
                rc, _, err = c.cli("task", "submit", "--file", path)
                if rc == 0:
                    for d in docs:
                        accepted[d["task_id"]] = {"kind": a["kind"],
                                                  "nodes": d["target_selector"]["nodes"],
                                                  "group": a["id"],
                                                  "max_retries": d["retry_policy"]["max_retries"]}
                elif now < args.duration + 20:
                    retry_q.append((now + 1, what, a))
            elif what == "cancel":
                if a["id"] not in accepted:
                    if now < args.duration + 20:
                        retry_q.append((now + 1, what, a))
                    continue
                rc, _, err = c.cli("task", "cancel", "--task-id", a["id"], "--reason", "chaos")
                cancels[a["id"]] = rc == 0
            elif what == "retry":
                if a["id"] not in accepted:
                    if now < args.duration + 20:
                        retry_q.append((now + 1, what, a))
                    continue
                rc, _, err = c.cli("task", "retry", "--task-id", a["id"])
                if rc == 0:
                    retries[a["id"]] = retries.get(a["id"], 0) + 1
                elif now < args.duration + 12 and a.get("tries", 0) < 8:
                    # Not FAILED yet (still running or retrying): ask again.
                    retry_q.append((now + 1.5, what, dict(a, tries=a.get("tries", 0) + 1)))
        time.sleep(0.05)
    # Heal everything, restart whatever is down: every replica running, none
    # stopped, none cut off from the store.
    faults.end_all()
    c.orch_wanted = [True] * c.replicas
    for r in range(c.replicas):
        c.resume_orch(r)
        if c.pg_proxy:
            c.heal_store(r)
    for i in range(args.agents):
        c.heal(i)
        c.set_delay(i, 0)
        c.start_agent(i)
    c.ensure_orch()
    healed_at = time.time()
    log(f"schedule done: {len(accepted)} tasks accepted, faults {faults.counts}; converging")
    seen = sorted(s for s in faults.noticed_s if s is not None)
    if faults.noticed_s:
        log(f"partition_one: the center showed the node disconnected in {len(seen)} of "
            f"{len(faults.noticed_s)} partitions of a connected node (the others healed first)"
            + (f", after {seen[0]}..{seen[-1]} s (median {seen[len(seen) // 2]} s)" if seen else ""))

    converged_s = None
    deadline = healed_at + args.converge_timeout
    left = []
    while time.time() < deadline:
        statuses = list_tasks(c)
        if statuses is not None:
            left = [t for t in accepted if t not in statuses] + unsettled(c, statuses, accepted)
            if not left:
                converged_s = time.time() - healed_at
                break
        time.sleep(1)
    if converged_s is None:
        log(f"NOT converged after {args.converge_timeout}s: {len(left)} task(s) left, e.g. {left[:5]}")
    else:
        log(f"converged {converged_s:.1f}s after the last fault")
    replication = replica_figures(c, faults, work) if c.replicas > 1 else None

    # Collect. Events an agent logged just before convergence may still be
    # on their way: give the backlogs a bounded grace period (live WAL
    # dumps are read-only), then stop the agents cleanly and dump again.
    def dump_wals():
        for i in range(args.agents):
            with open(os.path.join(work, c.names[i] + ".wal.jsonl"), "w") as out:
                subprocess.run([c.bin + "/edge-agent", "--dump-wal",
                                os.path.join(c.agent_dir(i), "wal")], stdout=out,
                               stderr=subprocess.DEVNULL, timeout=60)

    def fetch(tid):
        rc1, s1, _ = c.cli("-o", "json", "task", "status", "--task-id", tid)
        rc2, s2, _ = c.cli("-o", "json", "task", "events", "--task-id", tid)
        return tid, {"status": json.loads(s1) if rc1 == 0 else None,
                     "events": json.loads(s2) if rc2 == 0 else None}

    def fetch_all(ids):
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            return dict(ex.map(fetch, sorted(ids)))

    def unrecorded():
        seen = set()
        for s in store.values():
            for e in (s["events"] or {}).get("entries", []):
                seen.add(checker.parse_cause(e["cause"])[1])
        tasks = set()
        for i in range(args.agents):
            with open(os.path.join(work, c.names[i] + ".wal.jsonl")) as f:
                for line in f:
                    e = json.loads(line)
                    if e["event_id"] not in seen and e["event_type"] != "SNAPSHOT":
                        tasks.add(e["task_id"])
        return tasks

    statuses = list_tasks(c) or {}
    store = fetch_all(set(statuses) | set(accepted))
    for _ in range(20):
        dump_wals()
        late = unrecorded()
        if not late:
            break
        time.sleep(1)
        store.update(fetch_all(late))
    for i in range(args.agents):
        c.stop_agent(i)
    dump_wals()
    store.update(fetch_all(unrecorded()))
    run_info = {"seed": seed, "duration": args.duration, "agents": c.names,
                "backend": ("postgresql" if args.pg else "sqlite") + "+" +
                           ("nats" if args.nats else "embedded"),
                "net": "netns" if c.fabric else "proxy",
                "accepted": accepted, "cancels": cancels, "operator_retries": retries,
                "faults": faults.counts, "convergence_s": converged_s,
                "orchestrator_exits": c.orch_restarts,
                "storm_reconnect_s": faults.storm_reconnect_s,
                "partition_noticed_s": faults.noticed_s,
                "converge_timeout_s": args.converge_timeout, "switches": args.env}
    if replication:
        run_info.update(replicas=c.replicas, lease_ttl_s=args.lease_ttl, replication=replication)
    with open(os.path.join(work, "run.json"), "w") as f:
        json.dump(run_info, f, indent=1)
    with open(os.path.join(work, "store.json"), "w") as f:
        json.dump(store, f)
    report = checker.check_dir(work)
    print(report.verdict_line(), flush=True)
    for v in report.violations[:30]:
        print("  violation:", v, flush=True)
    if args.expect_violation:
        missing = [k for k in args.expect_violation if not report.by_kind.get(k)]
        if missing:
            log(f"expected violation(s) {missing} were NOT reported: the checker missed a planted bug")
            return 1
        log(f"planted bug caught: {', '.join(args.expect_violation)} reported as expected")
        return 0
    return 0 if report.ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="dir with orchestrator, edge-agent, apollo-cli")
    ap.add_argument("--orchestrator-bin",
                    help="the orchestrator binary (default: --bin's); agents still come from --bin")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--duration", type=float, default=120)
    ap.add_argument("--agents", type=int, default=20)
    ap.add_argument("--pg", action="store_true", help="PostgreSQL 15 store (throwaway server)")
    ap.add_argument("--nats", action="store_true", help="NATS JetStream bus (throwaway server)")
    ap.add_argument("--net", choices=["auto", "netns", "proxy"], default="auto",
                    help="how partitions are made: nft drop rules in per-agent network "
                    "namespaces (netns, needs root), or the loopback proxy closing connections "
                    "(proxy); auto: netns if a namespace can be made, else proxy")
    ap.add_argument("--replicas", type=int, default=1,
                    help="orchestrator replicas on the one store (needs --pg); more than 1 adds "
                    "the faults " + ", ".join(REPLICA_FAULTS))
    ap.add_argument("--lease-ttl", type=float, default=3,
                    help="with --replicas: the leader lease (replication.lease_ttl, s, 1-60)")
    ap.add_argument("--converge-timeout", type=float, default=180)
    ap.add_argument("--ack-timeout", type=float, default=3,
                    help="the orchestrator's ack_timeout (s): lower means more re-sent intents")
    ap.add_argument("--faults", help="comma-separated fault kinds to draw from (default: all): "
                    + ", ".join(ALL_FAULTS))
    ap.add_argument("--tasks", help="comma-separated task kinds of the workload (default: all): "
                    + ", ".join(ALL_TASKS))
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true", help="keep the state dir even on success")
    ap.add_argument("--env", action="append", default=[],
                    help="NAME=VALUE for the orchestrator and agents (test-only switches)")
    ap.add_argument("--expect-violation", action="append", default=[],
                    help="succeed only if the checker reports this kind (planted-bug tests)")
    args = ap.parse_args()
    for exe in ("orchestrator", "edge-agent", "apollo-cli"):
        if not os.access(os.path.join(args.bin, exe), os.X_OK):
            print(f"chaos: {exe} not found in {args.bin}", file=sys.stderr)
            return 2
    multi = not args.tasks or "multi" in args.tasks.split(",")
    if args.agents < 1 or (multi and args.agents < 3):
        print(f"chaos: --agents {args.agents}: need at least 3 while the workload has multi-node "
              "tasks (they target 3 nodes); choose --tasks without 'multi' for fewer",
              file=sys.stderr)
        return 2
    if args.faults and not set(args.faults.split(",")) <= set(ALL_FAULTS):
        print(f"chaos: --faults: unknown kind in '{args.faults}' (known: {', '.join(ALL_FAULTS)})",
              file=sys.stderr)
        return 2
    if args.replicas < 1 or (args.replicas > 1 and not args.pg):
        print(f"chaos: --replicas {args.replicas}: several orchestrators need the PostgreSQL "
              "store (--pg); a SQLite store serves one", file=sys.stderr)
        return 2
    if args.replicas > 1 and not 1 <= args.lease_ttl <= 60:
        print(f"chaos: --lease-ttl {args.lease_ttl:g}: the lease must be 1-60 s", file=sys.stderr)
        return 2
    if args.faults and args.replicas == 1 and set(args.faults.split(",")) & set(REPLICA_FAULTS):
        print(f"chaos: --faults '{args.faults}': {', '.join(REPLICA_FAULTS)} need --replicas 2 "
              "or more", file=sys.stderr)
        return 2
    if args.tasks and not set(args.tasks.split(",")) <= set(ALL_TASKS):
        print(f"chaos: --tasks: unknown kind in '{args.tasks}' (known: {', '.join(ALL_TASKS)})",
              file=sys.stderr)
        return 2
    return run(args)


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # SIGTERM too: the finally of run() stops our processes


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _interrupt)
    sys.exit(main())
