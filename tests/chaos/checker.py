#!/usr/bin/env python3
"""Consistency checker for a chaos run (issue 8).

    checker.py RUN_DIR

reads what chaos.py collected in RUN_DIR after the system converged:
  run.json          accepted tasks, cancels, operator retries, faults, convergence
  store.json        per task: `apollo-cli -o json task status` and `task events`
  journal/<node>    one line "task_id attempt node_id" per execution (fsynced
                    by the task itself before it returns)
  <node>.wal.jsonl  `edge-agent --dump-wal` of every agent: its durable events
and checks the invariants of issue 8. Violation kinds:
  lost_task          an accepted task is missing, or not settled and not
                     explained by a blocked_reason
  lost_event         an event durable in an agent's WAL is not in the store's history
  duplicate_event    one event_id recorded twice in the history (dedup failed)
  duplicate_effect   more than one journal entry for one (task, node, attempt)
  extra_execution    more executions of a (task, node) than 1 + retries granted,
                     or an execution of an attempt the store never dispatched
  illegal_transition a history step the state machine (src/core/task_state.cc) forbids
  broken_history     a history that does not chain (from != previous to) or
                     whose versions do not increase with every change
  fencing            a state change made by an event of a superseded attempt, or
                     of an attempt a granted retry has already judged
  agreement          an agent's final local state differs from the store's
  rollout_order      a rollout's batch k+1 was dispatched before every row of
                     the batches up to k had ended (issue 21)
  cancel_not_delivered  the agent ran a task the store had cancelled to
                     SUCCEEDED although the center reached it meanwhile (it
                     took newer work first): the cancel was never re-sent
  stale_epoch        with several orchestrators: in the store's history in
                     global insert order (its id), the leader epoch a row was
                     written under goes down: a deposed leader's write was
                     committed after its successor's (rows of epoch 0, not
                     fenced or single mode, are not ordered)
Prints one verdict line with the figures; exit 0 when there is no violation.
"""
import datetime
import json
import os
import sys

# The state machine, as in src/core/task_state.cc (kAllowed).
ALLOWED = {
    "PENDING": {"DISPATCHED", "CANCELLED", "TIMEOUT"},
    "DISPATCHED": {"RUNNING", "CANCELLED", "TIMEOUT"},
    "RUNNING": {"SUCCEEDED", "FAILED", "TIMEOUT", "CANCELLED"},
    "SUCCEEDED": set(),
    "FAILED": {"RETRYING"},
    "RETRYING": {"RUNNING", "CANCELLED", "TIMEOUT"},
    "CANCELLED": set(),
    "TIMEOUT": {"RETRYING"},
}
# Edges only the center's schedule-to-start deadline takes (cause
# not_started): a run that never started. Anything else reaching TIMEOUT
# from there (an agent's report, a reconcile) skipped RUNNING.
NOT_STARTED_ONLY = {("PENDING", "TIMEOUT"), ("RETRYING", "TIMEOUT")}
SETTLED = {"SUCCEEDED", "CANCELLED", "FAILED", "TIMEOUT"}
# What an event makes of the agent's local state (src/agent/task_table.cc).
LOCAL_STATE = {
    "ACCEPTED": "RUNNING", "ALREADY_RUNNING": "RUNNING", "SUCCEEDED": "SUCCEEDED",
    "ALREADY_DONE": "SUCCEEDED", "FAILED": "FAILED", "CANCELLED": "CANCELLED",
    "TIMEOUT": "TIMEOUT",
}
KINDS = ["lost_task", "lost_event", "duplicate_event", "duplicate_effect", "extra_execution",
         "illegal_transition", "broken_history", "fencing", "agreement", "cancel_not_delivered",
         "rollout_order", "stale_epoch"]


class Report:
    def __init__(self):
        self.violations = []
        self.by_kind = {k: 0 for k in KINDS}
        self.figures = {}

    def add(self, kind, msg):
        self.by_kind[kind] += 1
        self.violations.append(f"{kind}: {msg}")

    @property
    def ok(self):
        return not self.violations

    def verdict_line(self):
        f = self.figures
        faults = ",".join(f"{k}={v}" for k, v in sorted(f.get("faults", {}).items())) or "none"
        viol = ",".join(f"{k}={v}" for k, v in self.by_kind.items() if v) or "none"
        conv = f.get("convergence_s")
        conv = f"{conv:.1f}s" if conv is not None else "NOT-CONVERGED"
        return (f"chaos verdict: {'PASS' if self.ok else 'FAIL'} seed={f.get('seed')} "
                f"backend={f.get('backend')} net={f.get('net')} agents={f.get('agents')} tasks={f.get('tasks')} "
                f"executions={f.get('executions')} wal_events={f.get('wal_events')} "
                f"history_entries={f.get('history_entries')} faults[{faults}] "
                f"violations[{viol}] convergence={conv} "
                f"cancel_races[interrupted={f.get('cancel_races_interrupted', 0)},"
                f"done={f.get('cancel_races_done', 0)}]"
                + (f" storm_reconnect_max={max(f['storm_reconnect_s'])}s"
                   if f.get("storm_reconnect_s") else "")
                + (f" replicas={f['replicas']} epochs={f.get('epochs', 0)}"
                   f" step_downs={f.get('step_downs', 0)}" if f.get("replicas", 1) > 1 else ""))


def parse_cause(cause):
    """"event n01-7 SUCCEEDED (stale_attempt)" -> ("event", "n01-7", "SUCCEEDED", "stale_attempt")."""
    outcome = "applied"
    if cause.endswith(")") and " (" in cause:
        cause, outcome = cause[:-1].rsplit(" (", 1)
    parts = cause.split()
    kind = parts[0] if parts else ""
    event_id = parts[1] if kind == "event" and len(parts) > 1 else ""
    etype = parts[2] if kind == "event" and len(parts) > 2 else ""
    return kind, event_id, etype, outcome


def load_dir(d):
    with open(os.path.join(d, "run.json")) as f:
        run = json.load(f)
    with open(os.path.join(d, "store.json")) as f:
        store = json.load(f)
    journal = []
    jdir = os.path.join(d, "journal")
    if os.path.isdir(jdir):
        for name in sorted(os.listdir(jdir)):
            with open(os.path.join(jdir, name)) as f:
                for line in f:
                    p = line.split()
                    if len(p) == 3:
                        journal.append((p[0], int(p[1]), p[2]))
    wal = {}
    for node in run["agents"]:
        path = os.path.join(d, node + ".wal.jsonl")
        events = []
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    line = line.strip()
                    if line:
                        events.append(json.loads(line))
        wal[node] = events
    return run, store, journal, wal


def check(run, store, journal, wal):
    r = Report()
    r.figures.update(seed=run["seed"], backend=run["backend"], net=run.get("net", "proxy"),
                     agents=len(run["agents"]),
                     faults=run.get("faults", {}), convergence_s=run.get("convergence_s"),
                     storm_reconnect_s=run.get("storm_reconnect_s", []),
                     replicas=run.get("replicas", 1),
                     step_downs=sum((run.get("replication") or {}).get("step_downs", {}).values()))

    # ---- no lost task
    accepted = run["accepted"]
    r.figures["tasks"] = len(accepted)
    rows = {}  # (task, node) -> node row of the status
    for tid, s in store.items():
        st = s.get("status")
        if st is None:
            continue
        for n in st["nodes"]:
            rows[(tid, n["node_id"])] = n
    for tid in sorted(accepted):
        st = (store.get(tid) or {}).get("status")
        if st is None:
            r.add("lost_task", f"{tid} was accepted but the store does not know it")
            continue
        max_retries = accepted[tid].get("max_retries", 0)
        for n in st["nodes"]:
            if n["status"] in ("SUCCEEDED", "CANCELLED") or \
                    n.get("blocked_reason", "").startswith("upstream_failed"):
                continue
            if n["status"] in ("FAILED", "TIMEOUT") and n["retries"] >= max_retries:
                continue
            r.add("lost_task", f"{tid} on {n['node_id']} is {n['status']} (retries "
                               f"{n['retries']}/{max_retries}) with no blocked_reason")

    # ---- histories: legal paths, versions, fencing, duplicate events
    seen_events = {}  # event_id -> count of history entries
    n_hist = 0
    for tid, s in sorted(store.items()):
        ev = s.get("events")
        if ev is None:
            if tid in accepted:
                r.add("lost_task", f"{tid}: the store returned no history")
            continue
        by_node = {}
        for e in ev["entries"]:
            by_node.setdefault(e["node_id"], []).append(e)
            n_hist += 1
        for node, entries in by_node.items():
            state, version, attempt = None, 0, 0
            judged = 0  # the latest attempt a granted retry judged finished
            for e in entries:
                kind, event_id, etype, outcome = parse_cause(e["cause"])
                # The RUNNING step a finished-run report implies (store's
                # AgentReportPath) carries the same event id as the step it
                # leads to: one event, two rows, not a duplicate.
                implied = (e.get("detail") or "").startswith("implied by ")
                if event_id and not implied:
                    seen_events[event_id] = seen_events.get(event_id, 0) + 1
                    if seen_events[event_id] == 2:
                        r.add("duplicate_event", f"{event_id} ({etype}) recorded twice in {tid}'s history")
                frm, to, ver = e.get("from") or None, e["to"], e["version"]
                if kind == "create":
                    state, version = to, ver
                    continue
                if state is not None and frm != state:
                    r.add("broken_history", f"{tid}/{node}: entry '{e['cause']}' starts from {frm}, "
                                            f"the row was {state}")
                if frm != to:
                    if to not in ALLOWED.get(frm, set()):
                        r.add("illegal_transition", f"{tid}/{node}: {frm} -> {to} by '{e['cause']}'")
                    elif (frm, to) in NOT_STARTED_ONLY and not e["cause"].startswith("not_started"):
                        r.add("illegal_transition", f"{tid}/{node}: {frm} -> {to} by '{e['cause']}' "
                                                    "(only the not_started deadline takes it)")
                    if ver <= version:
                        r.add("broken_history", f"{tid}/{node}: version {ver} after {version} "
                                                f"on {frm} -> {to}")
                    if kind == "event" and e["attempt"] < attempt:
                        r.add("fencing", f"{tid}/{node}: {frm} -> {to} by '{e['cause']}' of attempt "
                                         f"{e['attempt']}, attempt {attempt} was current")
                    elif kind == "event" and e["attempt"] <= judged:
                        r.add("fencing", f"{tid}/{node}: {frm} -> {to} by '{e['cause']}' of attempt "
                                         f"{e['attempt']}, which a granted retry had judged")
                elif ver < version:
                    r.add("broken_history", f"{tid}/{node}: version went back {version} -> {ver}")
                elif kind == "event" and ver > version:
                    # An event that "moves" a row to the state it is in: the
                    # machine refuses self-transitions ("already RUNNING").
                    r.add("illegal_transition", f"{tid}/{node}: {frm} -> {to} (self) applied by "
                                                f"'{e['cause']}'")
                if kind != "event":
                    attempt = max(attempt, e["attempt"])
                if kind == "retry" and to == "RETRYING":
                    judged = max(judged, e["attempt"])
                state, version = to, max(version, ver)
    r.figures["history_entries"] = n_hist
    check_rollout_order(r, store)
    check_epochs(r, store)

    # ---- no lost event
    n_wal = 0
    for node, events in wal.items():
        for e in events:
            n_wal += 1
            if e["event_type"] == "SNAPSHOT":
                continue
            if e["event_id"] not in seen_events:
                r.add("lost_event", f"{e['event_id']} ({e['event_type']} of {e['task_id']} attempt "
                                    f"{e['attempt']}) is durable in {node}'s WAL, not in the store")
    r.figures["wal_events"] = n_wal

    # ---- no duplicate effect
    r.figures["executions"] = len(journal)
    per_attempt, per_pair = {}, {}
    for tid, attempt, node in journal:
        per_attempt[(tid, node, attempt)] = per_attempt.get((tid, node, attempt), 0) + 1
        per_pair.setdefault((tid, node), set()).add(attempt)
    for (tid, node, attempt), n in sorted(per_attempt.items()):
        if n > 1:
            r.add("duplicate_effect", f"{tid} attempt {attempt} ran {n} times on {node}")
    for (tid, node), attempts in sorted(per_pair.items()):
        row = rows.get((tid, node))
        if row is None:
            r.add("extra_execution", f"{tid} ran on {node}, which the store never targeted")
            continue
        if len(attempts) > 1 + row["retries"]:
            r.add("extra_execution", f"{tid} ran attempts {sorted(attempts)} on {node}, "
                                     f"retries granted: {row['retries']}")
        if max(attempts) > row["attempt"]:
            r.add("extra_execution", f"{tid} ran attempt {max(attempts)} on {node}, the store "
                                     f"dispatched up to {row['attempt']}")

    # ---- agreement: the agent's final local state per task == the store's
    cancelled = {t for t, ok in run.get("cancels", {}).items() if ok}
    # Store times of operator cancels and of dispatches, per (task, node).
    cancel_at, dispatch_at = {}, {}
    for tid, s in store.items():
        for e in (s.get("events") or {}).get("entries", []):
            if e["cause"].startswith("cancel") and e["to"] == "CANCELLED":
                cancel_at[(tid, e["node_id"])] = _us(e.get("at"))
            if e["cause"] == "dispatch" and e["to"] != e.get("from"):
                dispatch_at.setdefault((tid, e["node_id"]), _us(e.get("at")))
    for node, events in wal.items():
        local = {}  # task -> [attempt, state]
        for e in events:
            tid, a, t = e["task_id"], e["attempt"], e["event_type"]
            cur = local.get(tid)
            if cur and a < cur[0]:
                continue
            if t == "ACCEPTED" and (cur is None or cur[0] != a):
                local[tid] = [a, "RUNNING"]
                continue
            if t == "ALREADY_RUNNING" and cur is not None and cur[1] != "RUNNING":
                # A redelivery answer never moves a task that is final
                # locally (task_table.cc). One decided while the run was
                # finishing can be logged just after its end (seen with
                # real packet loss: a stalled intent and its resend arrive
                # together).
                continue
            if t in LOCAL_STATE and cur is not None and cur[0] == a:
                cur[1] = LOCAL_STATE[t]
            elif t in LOCAL_STATE and cur is None and t != "ACCEPTED":
                local[tid] = [a, LOCAL_STATE[t]]
        for tid, (a, state) in sorted(local.items()):
            row = rows.get((tid, node))
            if row is None:
                r.add("agreement", f"{node} knows {tid} (attempt {a}, {state}), the store has no such row")
                continue
            if a > row["attempt"]:
                r.add("agreement", f"{node} ran {tid} attempt {a}, the store's row is at attempt "
                                   f"{row['attempt']}")
            elif a == row["attempt"] and row["status"] == "CANCELLED" and state in (
                    "FAILED", "TIMEOUT", "SUCCEEDED") and tid in cancelled:
                # An operator cancel raced the agent's own end of the task (it
                # was cut off or down when the cancel came): the store keeps
                # the final CANCELLED, the late report is in the history
                # (illegal_transition). Not a disagreement, but counted.
                key = "cancel_races_done" if state == "SUCCEEDED" else "cancel_races_interrupted"
                r.figures[key] = r.figures.get(key, 0) + 1
                late = cancel_not_delivered(node, tid, events, cancel_at, dispatch_at)
                if state == "SUCCEEDED" and late:
                    r.add("cancel_not_delivered", late)
            elif a == row["attempt"] and state != row["status"]:
                r.add("agreement", f"{tid} attempt {a}: {node} says {state}, the store says "
                                   f"{row['status']}")
            elif a < row["attempt"] and row["status"] not in SETTLED:
                r.add("agreement", f"{tid}: {node} last saw attempt {a} ({state}); the store's "
                                   f"attempt {row['attempt']} is {row['status']}")

    if run.get("convergence_s") is None and not r.by_kind["lost_task"]:
        r.add("lost_task", f"the system did not converge within {run.get('converge_timeout_s')} s")
    return r


def check_rollout_order(r, store):
    """A rollout opens batch k+1 only once every row of the batches up to k
    ended: no row of a later batch is dispatched (history order) before the
    last final step of a row of an earlier one."""
    for tid, s in sorted(store.items()):
        st, ev = s.get("status"), s.get("events")
        if not st or not ev or "rollout" not in st:
            continue
        batch = {n["node_id"]: n.get("batch", 0) for n in st["nodes"]}
        ended, first_sent = {}, {}  # node -> history index
        for i, e in enumerate(ev["entries"]):
            node = e["node_id"]
            if node not in batch or e["from"] == e["to"]:
                continue
            if e["to"] == "DISPATCHED" and node not in first_sent:
                first_sent[node] = i
            ended[node] = i  # the last state change; final states do not change again
        for node, sent in first_sent.items():
            for other, b in batch.items():
                if b < batch[node] and ended.get(other, -1) > sent:
                    r.add("rollout_order", f"{tid}: {node} (batch {batch[node]}) was dispatched "
                                           f"before {other} (batch {b}) ended")


def check_epochs(r, store):
    """Every write of a leader is fenced by its lease's epoch, under a share
    lock a taker must wait for (docs/replicas.md): all rows of one epoch are
    inserted before any row of the next. So in the history in global insert
    order (id) the epoch never goes down; a row that does was written by a
    deposed leader after its successor had written."""
    rows = []
    for tid, s in store.items():
        for e in (s.get("events") or {}).get("entries", []):
            if e.get("epoch") and e.get("id") is not None:
                rows.append((int(e["id"]), int(e["epoch"]), tid, e))
    rows.sort(key=lambda x: x[0])
    top = None  # (epoch, id, task) of the highest epoch so far
    epochs = set()
    for hid, epoch, tid, e in rows:
        epochs.add(epoch)
        if top and epoch < top[0]:
            r.add("stale_epoch", f"history id {hid} ({tid}/{e['node_id']} {e['from']} -> {e['to']} "
                                 f"by '{e['cause']}') was written at epoch {epoch} after id "
                                 f"{top[1]} ({top[2]}) at epoch {top[0]}: a deposed leader's "
                                 "write committed after its successor's")
        elif not top or epoch > top[0]:
            top = (epoch, hid, tid)
    r.figures["epochs"] = len(epochs)


def _us(rfc3339):
    """"2026-11-30T11:31:52.313000Z" -> microseconds since the epoch (None if absent)."""
    if not rfc3339:
        return None
    base, _, frac = rfc3339.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(base, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 1_000_000 + int((frac + "000000")[:6])


# A reconnect, its backlog and snapshot take a moment; a dispatch this long
# after the cancel proves the node was reachable again.
CANCEL_GRACE_US = 3_000_000


def cancel_not_delivered(node, tid, events, cancel_at, dispatch_at):
    """The agent finished `tid` (SUCCEEDED) after the store had cancelled it,
    although the center was reaching the agent meanwhile: the agent ACCEPTED
    another task, dispatched well after the cancel, before it logged `tid`'s
    SUCCEEDED (one session is FIFO, so a cancel sent then would have come
    first). Returns the evidence, or "" if the race is explained by the
    agent being cut off until it finished."""
    c = cancel_at.get((tid, node))
    if c is None:
        return ""
    done_seq = max((e["sequence_number"] for e in events
                    if e["task_id"] == tid and e["event_type"] == "SUCCEEDED"), default=None)
    if done_seq is None:
        return ""
    for e in events:
        if e["sequence_number"] >= done_seq or e["event_type"] != "ACCEPTED":
            continue
        d = dispatch_at.get((e["task_id"], node))
        if d is not None and d > c + CANCEL_GRACE_US:
            return (f"{tid} was CANCELLED in the store, yet {node} ran it to SUCCEEDED: it took "
                    f"{e['task_id']} (dispatched {(d - c) / 1e6:.1f} s after the cancel) before "
                    f"finishing, so the cancel was never re-sent to it")
    return ""


def check_dir(d):
    return check(*load_dir(d))


def main():
    if len(sys.argv) != 2:
        print("usage: checker.py RUN_DIR", file=sys.stderr)
        return 2
    try:
        report = check_dir(sys.argv[1])
    except (OSError, ValueError, KeyError) as e:
        print(f"checker: cannot read the run in {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    print(report.verdict_line())
    for v in report.violations:
        print("  violation:", v)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
