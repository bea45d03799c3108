#!/usr/bin/env python3
"""Unit tests of checker.py on small hand-made runs: a clean run passes, and
each violation kind is reported when its invariant is broken."""
import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402


def entry(node, frm, to, version, attempt, cause):
    return {"node_id": node, "from": frm, "to": to, "version": version, "attempt": attempt,
            "cause": cause, "detail": "", "at": ""}


def wal_event(node, seq, task, attempt, etype):
    return {"event_id": f"{node}-{seq}", "task_id": task, "node_id": node, "attempt": attempt,
            "event_type": etype, "sequence_number": seq}


def clean_run():
    """t1 on n1: dispatched, ran once, succeeded. f1 on n1: failed once,
    retried by policy, succeeded on attempt 2."""
    run = {"seed": 1, "backend": "test", "agents": ["n1"], "faults": {}, "convergence_s": 1.0,
           "accepted": {"t1": {"max_retries": 2}, "f1": {"max_retries": 2}}}
    store = {
        "t1": {"status": {"task_id": "t1", "status": "SUCCEEDED", "nodes": [
            {"node_id": "n1", "status": "SUCCEEDED", "attempt": 1, "retries": 0,
             "blocked_reason": ""}]},
            "events": {"entries": [
                entry("n1", None, "PENDING", 1, 0, "create"),
                entry("n1", "PENDING", "DISPATCHED", 2, 1, "dispatch"),
                entry("n1", "DISPATCHED", "RUNNING", 3, 1, "event n1-1 ACCEPTED"),
                entry("n1", "RUNNING", "SUCCEEDED", 4, 1, "event n1-2 SUCCEEDED")]}},
        "f1": {"status": {"task_id": "f1", "status": "SUCCEEDED", "nodes": [
            {"node_id": "n1", "status": "SUCCEEDED", "attempt": 2, "retries": 1,
             "blocked_reason": ""}]},
            "events": {"entries": [
                entry("n1", None, "PENDING", 1, 0, "create"),
                entry("n1", "PENDING", "DISPATCHED", 2, 1, "dispatch"),
                entry("n1", "DISPATCHED", "RUNNING", 3, 1, "event n1-3 ACCEPTED"),
                entry("n1", "RUNNING", "FAILED", 4, 1, "event n1-4 FAILED"),
                entry("n1", "FAILED", "RETRYING", 5, 1, "retry"),
                entry("n1", "RETRYING", "RETRYING", 6, 2, "dispatch"),
                entry("n1", "RETRYING", "RUNNING", 7, 2, "event n1-5 ACCEPTED"),
                entry("n1", "RUNNING", "SUCCEEDED", 8, 2, "event n1-6 SUCCEEDED")]}},
    }
    journal = [("t1", 1, "n1"), ("f1", 1, "n1"), ("f1", 2, "n1")]
    wal = {"n1": [wal_event("n1", 1, "t1", 1, "ACCEPTED"),
                  wal_event("n1", 2, "t1", 1, "SUCCEEDED"),
                  wal_event("n1", 3, "f1", 1, "ACCEPTED"),
                  wal_event("n1", 4, "f1", 1, "FAILED"),
                  wal_event("n1", 5, "f1", 2, "ACCEPTED"),
                  wal_event("n1", 6, "f1", 2, "SUCCEEDED")]}
    return run, store, journal, wal


def kinds(run, store, journal, wal):
    r = checker.check(run, store, journal, wal)
    return {k for k, v in r.by_kind.items() if v}


class CheckerTest(unittest.TestCase):
    def test_clean_run_passes(self):
        r = checker.check(*clean_run())
        self.assertTrue(r.ok, r.violations)
        self.assertIn("PASS", r.verdict_line())
        self.assertEqual(r.figures["executions"], 3)

    def test_verdict_names_network_mode(self):
        run, store, journal, wal = clean_run()
        self.assertIn(" net=proxy ", checker.check(run, store, journal, wal).verdict_line())
        run["net"] = "netns"
        self.assertIn(" net=netns ", checker.check(run, store, journal, wal).verdict_line())

    def test_lost_task(self):
        run, store, journal, wal = clean_run()
        run["accepted"]["t9"] = {"max_retries": 0}
        self.assertEqual(kinds(run, store, journal, wal), {"lost_task"})

    def test_stuck_task_is_lost_unless_upstream_failed(self):
        run, store, journal, wal = clean_run()
        run["accepted"]["d1"] = {"max_retries": 0}
        store["d1"] = {"status": {"nodes": [{"node_id": "n1", "status": "PENDING", "attempt": 0,
                                             "retries": 0, "blocked_reason": "node_lost"}]},
                       "events": {"entries": [entry("n1", None, "PENDING", 1, 0, "create")]}}
        self.assertEqual(kinds(run, store, journal, wal), {"lost_task"})
        store["d1"]["status"]["nodes"][0]["blocked_reason"] = "upstream_failed (FAILED)"
        self.assertEqual(kinds(run, store, journal, wal), set())

    def test_failed_with_retries_left_is_not_settled(self):
        run, store, journal, wal = clean_run()
        store["t1"]["status"]["nodes"][0]["status"] = "FAILED"
        self.assertIn("lost_task", kinds(run, store, journal, wal))

    def test_lost_event(self):
        run, store, journal, wal = clean_run()
        wal["n1"].append(wal_event("n1", 7, "t1", 1, "PROGRESS"))
        self.assertEqual(kinds(run, store, journal, wal), {"lost_event"})

    def test_duplicate_event(self):
        run, store, journal, wal = clean_run()
        store["t1"]["events"]["entries"].append(
            entry("n1", "SUCCEEDED", "SUCCEEDED", 4, 1, "event n1-2 SUCCEEDED (illegal_transition)"))
        self.assertEqual(kinds(run, store, journal, wal), {"duplicate_event"})

    def test_duplicate_effect(self):
        run, store, journal, wal = clean_run()
        journal.append(("t1", 1, "n1"))
        self.assertEqual(kinds(run, store, journal, wal), {"duplicate_effect"})

    def test_extra_execution(self):
        run, store, journal, wal = clean_run()
        journal.append(("t1", 2, "n1"))  # attempt 2 never dispatched, no retry granted
        self.assertEqual(kinds(run, store, journal, wal), {"extra_execution"})

    def test_rollout_order(self):
        """A rollout of n1 (batch 1) then n2 (batch 2): fine when n2 is sent
        after n1 ended; a violation when n2 is sent while n1 still runs."""
        def rollout_run(n2_sent_early):
            run, store, journal, wal = clean_run()
            n1 = [entry("n1", None, "PENDING", 1, 0, "create"),
                  entry("n1", "PENDING", "DISPATCHED", 2, 1, "dispatch"),
                  entry("n1", "DISPATCHED", "RUNNING", 3, 1, "event n1-7 ACCEPTED"),
                  entry("n1", "RUNNING", "SUCCEEDED", 4, 1, "event n1-8 SUCCEEDED")]
            n2 = [entry("n2", None, "PENDING", 1, 0, "create"),
                  entry("n2", "PENDING", "PENDING", 2, 0, "rollout"),
                  entry("n2", "PENDING", "DISPATCHED", 3, 1, "dispatch")]
            entries = n1[:1] + n2[:1] + n1[1:3] + (n2[1:] + n1[3:] if n2_sent_early
                                                    else n1[3:] + n2[1:])
            store["r1"] = {"status": {"task_id": "r1", "status": "RUNNING", "rollout": {},
                                      "nodes": [{"node_id": "n1", "batch": 1,
                                                 "status": "SUCCEEDED", "attempt": 1,
                                                 "retries": 0, "blocked_reason": ""},
                                                {"node_id": "n2", "batch": 2,
                                                 "status": "DISPATCHED", "attempt": 1,
                                                 "retries": 0, "blocked_reason": ""}]},
                           "events": {"entries": entries}}
            return run, store, journal, wal
        self.assertNotIn("rollout_order", kinds(*rollout_run(False)))
        self.assertIn("rollout_order", kinds(*rollout_run(True)))

    def test_illegal_transition(self):
        run, store, journal, wal = clean_run()
        store["t1"]["events"]["entries"].append(
            entry("n1", "SUCCEEDED", "RUNNING", 5, 1, "event n1-7 ALREADY_RUNNING"))
        store["t1"]["status"]["nodes"][0]["status"] = "RUNNING"
        wal["n1"].append(wal_event("n1", 7, "t1", 1, "ALREADY_RUNNING"))
        self.assertIn("illegal_transition", kinds(run, store, journal, wal))

    def test_self_transition_by_an_event(self):
        run, store, journal, wal = clean_run()
        store["t1"]["events"]["entries"].append(
            entry("n1", "SUCCEEDED", "SUCCEEDED", 5, 1, "event n1-7 SUCCEEDED"))
        wal["n1"].append(wal_event("n1", 7, "t1", 1, "SUCCEEDED"))
        self.assertEqual(kinds(run, store, journal, wal), {"illegal_transition"})

    def test_versions_must_increase(self):
        run, store, journal, wal = clean_run()
        store["t1"]["events"]["entries"][3]["version"] = 3
        self.assertEqual(kinds(run, store, journal, wal), {"broken_history"})

    def test_history_must_chain(self):
        run, store, journal, wal = clean_run()
        store["t1"]["events"]["entries"][3]["from"] = "DISPATCHED"
        self.assertIn("broken_history", kinds(run, store, journal, wal))

    def test_fencing(self):
        run, store, journal, wal = clean_run()
        e = store["f1"]["events"]["entries"]
        # attempt 1's late SUCCEEDED applied while attempt 2 runs
        e[6] = entry("n1", "RETRYING", "RUNNING", 7, 2, "event n1-5 ACCEPTED")
        e[7] = entry("n1", "RUNNING", "SUCCEEDED", 8, 1, "event n1-6 SUCCEEDED")
        self.assertEqual(kinds(run, store, journal, wal), {"fencing"})

    def test_report_of_a_judged_attempt_must_not_move_the_row(self):
        # Chaos seed 219611314: attempt 1's late FAILED applied after the
        # retry was granted but before attempt 2 was sent.
        run, store, journal, wal = clean_run()
        e = store["f1"]["events"]["entries"]
        e[5:5] = [entry("n1", "RETRYING", "RUNNING", 6, 1, "event n1-9 FAILED"),
                  entry("n1", "RUNNING", "FAILED", 7, 1, "event n1-9 FAILED"),
                  entry("n1", "FAILED", "RETRYING", 8, 1, "retry")]
        e[5]["detail"] = "implied by FAILED of attempt 1: the agent ran it"
        for i, x in enumerate(e[8:]):
            x["version"] = 9 + i
        wal["n1"].append(wal_event("n1", 9, "f1", 1, "FAILED"))
        self.assertEqual(kinds(run, store, journal, wal), {"fencing"})

    def test_implied_running_step_is_not_a_duplicate(self):
        run, store, journal, wal = clean_run()
        e = store["t1"]["events"]["entries"]
        e[2:4] = [entry("n1", "DISPATCHED", "RUNNING", 3, 1, "event n1-2 SUCCEEDED"),
                  entry("n1", "RUNNING", "SUCCEEDED", 4, 1, "event n1-2 SUCCEEDED")]
        e[2]["detail"] = "implied by SUCCEEDED of attempt 1: the agent ran it"
        del wal["n1"][0]  # its ACCEPTED never existed
        self.assertEqual(kinds(run, store, journal, wal), set())

    def test_agreement(self):
        run, store, journal, wal = clean_run()
        wal2 = copy.deepcopy(wal)
        wal2["n1"][1]["event_type"] = "FAILED"  # the agent thinks t1 failed
        store["t1"]["events"]["entries"][3]["cause"] = "event n1-2 FAILED"
        self.assertEqual(kinds(run, store, journal, wal2), {"agreement"})

    def test_already_running_after_the_end_is_no_disagreement(self):
        run, store, journal, wal = clean_run()
        store["t1"]["events"]["entries"].append(
            entry("n1", "SUCCEEDED", "SUCCEEDED", 4, 1,
                  "event n1-7 ALREADY_RUNNING (illegal_transition)"))
        wal["n1"].insert(2, wal_event("n1", 7, "t1", 1, "ALREADY_RUNNING"))
        r = checker.check(run, store, journal, wal)
        self.assertTrue(r.ok, r.violations)
        # Before the end it still counts: the agent then says RUNNING.
        wal2 = copy.deepcopy(wal)
        del wal2["n1"][1]  # no SUCCEEDED logged
        self.assertIn("agreement", kinds(run, store, journal, wal2))

    def test_cancel_race_is_counted_not_a_disagreement(self):
        run, store, journal, wal = clean_run()
        run["cancels"] = {"t1": True}
        store["t1"]["status"]["nodes"][0]["status"] = "CANCELLED"
        store["t1"]["events"]["entries"][3] = entry("n1", "RUNNING", "CANCELLED", 4, 1, "cancel")
        store["t1"]["events"]["entries"].append(
            entry("n1", "CANCELLED", "CANCELLED", 4, 1, "event n1-2 SUCCEEDED (illegal_transition)"))
        r = checker.check(run, store, journal, wal)
        self.assertTrue(r.ok, r.violations)
        self.assertEqual(r.figures["cancel_races_done"], 1)
        run["cancels"] = {}  # no operator cancel: the same states disagree
        self.assertEqual(kinds(run, store, journal, wal), {"agreement"})

    def test_cancel_never_resent_to_a_reachable_agent(self):
        run, store, journal, wal = clean_run()
        run["cancels"] = {"t1": True}
        run["accepted"]["t2"] = {"max_retries": 2}

        def at(e, sec):
            e["at"] = f"2026-11-30T11:00:{sec:06.3f}000Z"
            return e
        store["t1"]["status"]["nodes"][0]["status"] = "CANCELLED"
        store["t1"]["events"]["entries"] = [
            at(entry("n1", None, "PENDING", 1, 0, "create"), 10),
            at(entry("n1", "PENDING", "DISPATCHED", 2, 1, "dispatch"), 10.1),
            at(entry("n1", "DISPATCHED", "RUNNING", 3, 1, "event n1-1 ACCEPTED"), 10.2),
            at(entry("n1", "RUNNING", "CANCELLED", 4, 1, "cancel"), 11),
            at(entry("n1", "CANCELLED", "CANCELLED", 4, 1,
                     "event n1-8 SUCCEEDED (illegal_transition)"), 30)]
        t2 = [at(entry("n1", None, "PENDING", 1, 0, "create"), 16),
              at(entry("n1", "PENDING", "DISPATCHED", 2, 1, "dispatch"), 16),
              at(entry("n1", "DISPATCHED", "RUNNING", 3, 1, "event n1-7 ACCEPTED"), 16.1),
              at(entry("n1", "RUNNING", "SUCCEEDED", 4, 1, "event n1-9 SUCCEEDED"), 31)]
        store["t2"] = {"status": {"nodes": [{"node_id": "n1", "status": "SUCCEEDED", "attempt": 1,
                                             "retries": 0, "blocked_reason": ""}]},
                       "events": {"entries": t2}}
        journal.append(("t2", 1, "n1"))
        wal["n1"] = [e for e in wal["n1"] if e["task_id"] != "t1" or e["event_type"] == "ACCEPTED"]
        wal["n1"] += [wal_event("n1", 7, "t2", 1, "ACCEPTED"),
                      wal_event("n1", 8, "t1", 1, "SUCCEEDED"),
                      wal_event("n1", 9, "t2", 1, "SUCCEEDED")]
        # t2 dispatched 5 s after t1's cancel and taken before t1 finished:
        # the agent was reachable, the cancel was never re-sent.
        self.assertEqual(kinds(run, store, journal, wal), {"cancel_not_delivered"})
        # Dispatched right after the cancel: the agent may still have been cut off.
        t2[1]["at"] = "2026-11-30T11:00:12.000000Z"
        self.assertEqual(kinds(run, store, journal, wal), set())

    def replicated_run(self):
        """clean_run as three replicas wrote it: each row with its global id;
        the leader's writes (dispatch, retry) fenced at its epoch, t1 under
        epoch 1, f1's retry after a failover under epoch 2; creates and
        agent events unfenced (epoch 0), interleaved anywhere."""
        run, store, journal, wal = clean_run()
        run["replicas"] = 3
        run["replication"] = {"step_downs": {"r1": 1, "r2": 0, "r3": 0}}
        ids = {"t1": [1, 2, 4, 6], "f1": [3, 5, 7, 8, 9, 10, 11, 12]}
        epochs = {"t1": [0, 1, 0, 0], "f1": [0, 1, 0, 0, 2, 2, 0, 0]}
        for tid in ("t1", "f1"):
            for e, i, ep in zip(store[tid]["events"]["entries"], ids[tid], epochs[tid]):
                e["id"], e["epoch"] = i, ep
        return run, store, journal, wal

    def test_clean_replicated_run_passes(self):
        r = checker.check(*self.replicated_run())
        self.assertTrue(r.ok, r.violations)
        self.assertIn(" replicas=3 epochs=2 step_downs=1", r.verdict_line())
        # One orchestrator: no epochs, and the verdict line as it was.
        self.assertNotIn("replicas=", checker.check(*clean_run()).verdict_line())

    def test_stale_epoch(self):
        # A deposed leader (epoch 1) dispatched t1 after its successor
        # (epoch 2) had retried f1: its write committed after the takeover.
        run, store, journal, wal = self.replicated_run()
        e = store["t1"]["events"]["entries"][1]
        e["id"] = 13
        self.assertEqual(kinds(run, store, journal, wal), {"stale_epoch"})
        v = checker.check(run, store, journal, wal).violations
        self.assertEqual(len(v), 1)
        self.assertIn("history id 13 (t1/n1 PENDING -> DISPATCHED by 'dispatch') was written at "
                      "epoch 1 after id 9 (f1) at epoch 2", v[0])
        # Unfenced rows (epoch 0) after a higher epoch are not out of order.
        run, store, journal, wal = self.replicated_run()
        store["t1"]["events"]["entries"][2]["id"] = 14
        self.assertEqual(kinds(run, store, journal, wal), set())

    def test_parse_cause(self):
        self.assertEqual(checker.parse_cause("event n-1-7 SUCCEEDED (stale_attempt)"),
                         ("event", "n-1-7", "SUCCEEDED", "stale_attempt"))
        self.assertEqual(checker.parse_cause("dispatch"), ("dispatch", "", "", "applied"))


if __name__ == "__main__":
    unittest.main()
