#!/usr/bin/env python3
"""netns.py against the real kernel: namespaces, veth pairs and nft drop rules
(needs root, iproute2 and nftables; fails, not skips, without them)."""
import os
import socket
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

# Inside the agent's namespace: connect to host:port, send a line, print the echo.
CLIENT = ("import socket,sys\n"
          "s=socket.create_connection((sys.argv[1],int(sys.argv[2])),float(sys.argv[3]))\n"
          "s.settimeout(float(sys.argv[3])); s.sendall(b'hi\\n'); print(s.recv(16).decode().strip())\n")


class Echo:
    """One-shot echo server on addr (a thread-free accept loop per call)."""

    def __init__(self, addr):
        self.sock = socket.socket()
        self.sock.bind((addr, 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]

    def serve_once(self, proc, timeout):
        end = time.time() + timeout
        while time.time() < end and proc.poll() is None:
            try:
                c, _ = self.sock.accept()
            except socket.timeout:
                continue
            with c:
                c.settimeout(2)
                try:
                    c.sendall(c.recv(16))
                except OSError:
                    pass
        return proc.wait(timeout)


class NetnsTest(unittest.TestCase):
    def setUp(self):
        ok, why = netns.probe()
        self.assertTrue(ok, f"network namespaces not available: {why}")
        self.fab = netns.NetnsFabric(2)
        self.fab.setup()

    def tearDown(self):
        self.fab.cleanup()

    def talk(self, i, timeout=2.0):
        echo = Echo(self.fab.host_addr[i])
        p = subprocess.Popen(self.fab.wrap(i, ["python3", "-c", CLIENT, self.fab.host_addr[i],
                                               str(echo.port), str(timeout)]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rc = echo.serve_once(p, timeout + 5)
        echo.sock.close()
        out, err = p.communicate()
        return rc, out.strip(), err

    def test_partition_drops_and_heal_restores(self):
        self.assertEqual(self.talk(0)[:2], (0, "hi"))
        self.fab.partition(0)
        t = time.time()
        rc, out, err = self.talk(0, timeout=1.5)
        # Dropped, not refused: the connect times out instead of failing fast.
        self.assertNotEqual(rc, 0)
        self.assertIn("timed out", err)
        self.assertGreater(time.time() - t, 1.2)
        self.assertEqual(self.talk(1)[:2], (0, "hi"), "agent 1 was not partitioned")
        self.fab.heal(0)
        self.assertEqual(self.talk(0)[:2], (0, "hi"))

    def test_established_connection_stalls_not_closed(self):
        echo = Echo(self.fab.host_addr[0])
        script = ("import socket,sys,time\n"
                  "s=socket.create_connection((sys.argv[1],int(sys.argv[2])),2)\n"
                  "print('up',flush=True); sys.stdin.readline()\n"
                  "s.settimeout(1.5)\n"
                  "try:\n s.sendall(b'x'); s.recv(1); print('got')\n"
                  "except socket.timeout: print('stalled')\n"
                  "except OSError as e: print('error', e)\n")
        p = subprocess.Popen(self.fab.wrap(0, ["python3", "-c", script, self.fab.host_addr[0],
                                               str(echo.port)]),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        echo.sock.settimeout(5)
        conn, _ = echo.sock.accept()
        self.assertEqual(p.stdout.readline().strip(), "up")
        self.fab.partition(0)
        p.stdin.write("\n")
        p.stdin.flush()
        conn.settimeout(1.5)
        with self.assertRaises(socket.timeout):
            conn.recv(1)  # nothing arrives and nothing is closed
        self.assertEqual(p.stdout.readline().strip(), "stalled")
        p.communicate(timeout=5)
        conn.close()
        echo.sock.close()

    def test_cleanup_removes_everything(self):
        names = list(self.fab.ns)
        self.fab.cleanup()
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        for ns in names:
            self.assertNotIn(ns, listed.split())
            self.assertFalse(os.path.exists(f"/sys/class/net/{ns}"))

    def test_stale_namespace_of_a_dead_run_is_removed(self):
        # A pid that is not running: a child that has exited.
        dead = subprocess.Popen(["true"])
        dead.wait()
        ns = f"ac{dead.pid}-0"
        subprocess.run(["ip", "netns", "add", ns], check=True)
        try:
            other = "apollotest-keep"  # not ours by name: never touched
            subprocess.run(["ip", "netns", "add", other], check=True)
            try:
                removed = netns.remove_stale()
                listed = subprocess.run(["ip", "netns", "list"], capture_output=True,
                                        text=True).stdout.split()
                self.assertIn(ns, removed)
                self.assertNotIn(ns, listed)
                self.assertIn(other, listed)
                # This run's own namespaces are alive (its pid runs this test).
                for mine in self.fab.ns:
                    self.assertIn(mine, listed)
            finally:
                subprocess.run(["ip", "netns", "del", other])
        finally:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


if __name__ == "__main__":
    unittest.main()
