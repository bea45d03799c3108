"""Real network partitions for chaos.py: one Linux network namespace per agent.

Agent i of the chaos run with pid P runs inside namespace `acP-i` (also the
name of the host end of its veth pair; at most 15 characters), on a private
/30 of 10.213.0.0/16: the host end has .1 of the block, the agent's end
(`ceth`, inside the namespace) .2. Nothing is routed: the agent reaches only
the host end, where the run's fault proxy listens for it (so delays still
come from the proxy).

A partition is an nftables table the run owns inside the agent's namespace
(`netdev apollo_chaos`, chains on the ingress and egress hooks of `ceth`):
partition() adds a drop rule to both, heal() flushes them. Packets are lost,
not refused, so both ends' TCP stalls until it times out or the link heals.
The table lives and dies with the namespace.

cleanup() removes every namespace this run made (and with it both veth ends
and the tables). remove_stale() removes those of chaos runs that are gone
(pid not alive, or no longer a chaos run). Namespaces with other names are
never touched. Addresses are allocated under a lock file so parallel runs
get disjoint blocks.
"""
import fcntl
import ipaddress
import os
import re
import shutil
import signal
import subprocess

NET = ipaddress.ip_network("10.213.0.0/16")
BLOCKS = NET.num_addresses // 4
LOCK = "/tmp/apollo-chaos-netns.lock"
NAME_RE = re.compile(r"^ac(\d+)-(\d+|probe)$")
TABLE = "apollo_chaos"
PEER = "ceth"


def _run(argv, check=True):
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise NetnsError(f"'{' '.join(argv)}' failed: {(r.stderr or r.stdout).strip()}")
    return r


class NetnsError(Exception):
    pass


def _owner_alive(pid):
    """True if pid is a running chaos run (chaos.py, or a test of this
    directory): its namespaces are in use. A pid reused by anything else
    leaves them stale."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"chaos" in f.read()
    except OSError:
        return False


def _our_namespaces():
    out = _run(["ip", "netns", "list"], check=False).stdout
    return [line.split()[0] for line in out.splitlines()
            if line.split() and NAME_RE.match(line.split()[0])]


def _delete_ns(ns):
    """Kills what still runs in the namespace (processes of the run that made
    it: agents and their task processes), then deletes it; its veth pair and
    nft table go with it."""
    pids = _run(["ip", "netns", "pids", ns], check=False).stdout.split()
    for p in pids:
        try:
            os.kill(int(p), signal.SIGKILL)
        except (ValueError, OSError):
            pass
    _run(["ip", "netns", "del", ns], check=False)
    # The host end disappears when the namespace is destroyed; if it lingers
    # (a process was still exiting), remove it.
    if os.path.exists(f"/sys/class/net/{ns}"):
        _run(["ip", "link", "del", ns], check=False)


def remove_stale():
    """Namespaces (and host veth ends) of chaos runs that are gone. Returns
    their names."""
    gone = []
    for ns in _our_namespaces():
        pid = int(NAME_RE.match(ns).group(1))
        if pid != os.getpid() and not _owner_alive(pid):
            _delete_ns(ns)
            gone.append(ns)
    for dev in os.listdir("/sys/class/net"):
        m = NAME_RE.match(dev)
        if m and int(m.group(1)) != os.getpid() and not _owner_alive(int(m.group(1))):
            _run(["ip", "link", "del", dev], check=False)
            gone.append(dev)
    return gone


def probe():
    """(True, "") if this process can make a namespace, a veth pair into it
    and an nft table inside; else (False, why)."""
    if os.geteuid() != 0:
        return False, "not running as root"
    for tool in ("ip", "nft"):
        if not shutil.which(tool):
            return False, f"'{tool}' not installed (apt-get install iproute2 nftables)"
    ns = f"ac{os.getpid()}-probe"
    try:
        _run(["ip", "netns", "add", ns])
        try:
            _run(["ip", "link", "add", ns, "type", "veth", "peer", "name", PEER, "netns", ns])
            _nft(ns, _table_def())
        finally:
            _delete_ns(ns)
    except (NetnsError, OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return True, ""


def _table_def():
    return (f"table netdev {TABLE} {{\n"
            f"  chain in {{ type filter hook ingress device \"{PEER}\" priority 0; policy accept; }}\n"
            f"  chain out {{ type filter hook egress device \"{PEER}\" priority 0; policy accept; }}\n"
            "}\n")


def _nft(ns, script):
    r = subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script,
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise NetnsError(f"nft in namespace {ns} failed: {r.stderr.strip()}")


def _used_blocks():
    """/30 blocks of 10.213.0.0/16 that some interface of this host already has."""
    out = _run(["ip", "-4", "-o", "addr", "show"], check=False).stdout
    used = set()
    for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/", out):
        a = ipaddress.ip_address(m.group(1))
        if a in NET:
            used.add((int(a) - int(NET.network_address)) // 4)
    return used


class NetnsFabric:
    def __init__(self, n):
        self.n = n
        self.pid = os.getpid()
        self.ns = [f"ac{self.pid}-{i}" for i in range(n)]
        self.host_addr = [None] * n
        self.agent_addr = [None] * n
        self.made = []  # namespaces created, for cleanup (also after a partial setup)
        self.cut = [False] * n

    def setup(self):
        """Removes stale namespaces of dead runs, then makes one namespace per
        agent. Returns the stale names removed."""
        if len(self.ns[-1]) > 15:
            raise NetnsError(f"interface name {self.ns[-1]} longer than 15 characters")
        with open(LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            stale = remove_stale()
            used = _used_blocks()
            free = [b for b in range(BLOCKS) if b not in used]
            if len(free) < self.n:
                raise NetnsError(f"10.213.0.0/16 has only {len(free)} free /30 blocks for "
                                 f"{self.n} agents")
            for i in range(self.n):
                base = int(NET.network_address) + 4 * free[i]
                self.host_addr[i] = str(ipaddress.ip_address(base + 1))
                self.agent_addr[i] = str(ipaddress.ip_address(base + 2))
                self._make(i)
        return stale

    def _make(self, i):
        ns, host = self.ns[i], self.ns[i]
        _run(["ip", "netns", "add", ns])
        self.made.append(ns)
        _run(["ip", "link", "add", host, "type", "veth", "peer", "name", PEER, "netns", ns])
        _run(["ip", "addr", "add", self.host_addr[i] + "/30", "dev", host])
        _run(["ip", "link", "set", host, "up"])
        _run(["ip", "-n", ns, "addr", "add", self.agent_addr[i] + "/30", "dev", PEER])
        _run(["ip", "-n", ns, "link", "set", PEER, "up"])
        _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        _nft(ns, _table_def())

    def wrap(self, i, argv):
        """argv run inside agent i's namespace."""
        return ["ip", "netns", "exec", self.ns[i]] + list(argv)

    def partition(self, i):
        if not self.cut[i]:
            _nft(self.ns[i], f"add rule netdev {TABLE} in drop\nadd rule netdev {TABLE} out drop\n")
            self.cut[i] = True

    def heal(self, i):
        if self.cut[i]:
            _nft(self.ns[i], f"flush chain netdev {TABLE} in\nflush chain netdev {TABLE} out\n")
            self.cut[i] = False

    def cleanup(self):
        for ns in self.made:
            _delete_ns(ns)
        self.made = []
