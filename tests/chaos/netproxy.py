"""A fault-injecting loopback TCP proxy with one listening port per agent.

Used in-process by chaos.py (a thread running an asyncio loop): agent i dials
its own port, every connection is forwarded to 127.0.0.1:<target_port>.
Agent i's port listens on hosts[i] (default 127.0.0.1; with --net netns the
host end of the agent's veth pair, see netns.py). With --replicas there is one
such proxy per orchestrator replica, and one more in front of PostgreSQL with
a port per replica (the "agent" is then a replica, the target the store).
Per agent the driver can
  cut(i)        drop the agent's open connections and refuse new ones
  stall(i)      forward nothing either way and connect nothing new, closing
                nothing (a silent link: the peers see no answer, no error;
                the proxy still acknowledges at the TCP level, so the
                kernel's own timeouts do not fire)
  heal(i)       accept and forward again (a stall's held bytes go on)
  delay(i, ms)  hold every chunk this long before forwarding (0: off)
Only loopback (or namespaces the run made). gRPC runs HTTP/2 over these connections, so duplication and
reordering are not done at the byte level (they would corrupt the framing,
not model a network); duplicated deliveries come from crashes and
reconnects (resent backlogs and intents) instead.
"""
import asyncio
import threading


class NetProxy:
    def __init__(self, target_port, n, hosts=None):
        self.target_port = target_port
        self.n = n
        self.hosts = hosts or ["127.0.0.1"] * n
        self.cut = [False] * n
        self.stalled = [False] * n
        self.delay_ms = [0] * n
        self.conns = [set() for _ in range(n)]
        self.ports = []
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    # ------------------------------------------------------------ control --
    def start(self):
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("proxy did not start")

    def _call(self, fn, *args):
        fut = asyncio.run_coroutine_threadsafe(self._wrap(fn, *args), self.loop)
        return fut.result(10)

    async def _wrap(self, fn, *args):
        return fn(*args)

    def partition(self, i):
        self._call(self._partition, i)

    def stall(self, i):
        self._call(self._stall, i)

    def heal(self, i):
        self._call(self._heal, i)

    def set_delay(self, i, ms):
        self._call(self._set_delay, i, ms)

    # ---------------------------------------------------------- internals --
    def _partition(self, i):
        self.cut[i] = True
        for a, b in list(self.conns[i]):
            for w in (a, b):
                try:
                    w.transport.abort()
                except Exception:
                    pass
        self.conns[i].clear()

    def _stall(self, i):
        self.stalled[i] = True

    def _heal(self, i):
        self.cut[i] = False
        self.stalled[i] = False

    def _set_delay(self, i, ms):
        self.delay_ms[i] = ms

    async def _pipe(self, i, reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                if self.delay_ms[i]:
                    await asyncio.sleep(self.delay_ms[i] / 1000.0)
                while self.stalled[i] and not self.cut[i]:
                    await asyncio.sleep(0.05)
                if self.cut[i]:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            # A silent link carries no FIN or RST either: the other end
            # learns of the close once the link heals (or is cut).
            while self.stalled[i] and not self.cut[i]:
                await asyncio.sleep(0.05)
            try:
                writer.transport.abort()
            except Exception:
                pass

    async def _handle(self, i, client_reader, client_writer):
        while self.stalled[i] and not self.cut[i]:
            await asyncio.sleep(0.05)  # a connect into a silent link waits
        if self.cut[i]:
            client_writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_writer.transport.abort()
            return
        pair = (client_writer, up_writer)
        self.conns[i].add(pair)
        try:
            await asyncio.gather(self._pipe(i, client_reader, up_writer),
                                 self._pipe(i, up_reader, client_writer))
        finally:
            self.conns[i].discard(pair)

    async def _main(self):
        servers = []
        for i in range(self.n):
            srv = await asyncio.start_server(
                lambda r, w, i=i: self._handle(i, r, w), self.hosts[i], 0)
            servers.append(srv)
            self.ports.append(srv.sockets[0].getsockname()[1])
        self._ready.set()
        await asyncio.gather(*(s.serve_forever() for s in servers))

    def _run(self):
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except Exception:
            pass
