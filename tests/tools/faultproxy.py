#!/usr/bin/env python3
"""A loopback TCP proxy that can cut the network, for fault-injection tests.

    faultproxy.py TARGET_PORT PORT_FILE

Listens on 127.0.0.1 (a port the kernel picks, written to PORT_FILE) and
forwards every connection to 127.0.0.1:TARGET_PORT.
  SIGUSR1: partition - drop every open connection and refuse new ones.
  SIGUSR2: heal      - accept and forward again.
Runs until killed; the test that starts it stops it by PID. Only loopback.
"""
import asyncio
import signal
import sys

cut = False
conns = set()


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer, target_port):
    if cut:
        client_writer.close()
        return
    try:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except OSError:
        client_writer.close()
        return
    pair = (client_writer, up_writer)
    conns.add(pair)
    try:
        await asyncio.gather(pipe(client_reader, up_writer), pipe(up_reader, client_writer))
    finally:
        conns.discard(pair)


def partition():
    global cut
    cut = True
    for a, b in list(conns):
        for w in (a, b):
            try:
                w.transport.abort()
            except Exception:
                pass
    conns.clear()


def heal():
    global cut
    cut = False


async def main():
    target_port = int(sys.argv[1])
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, target_port), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(str(port))
    import os
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, partition)
    loop.add_signal_handler(signal.SIGUSR2, heal)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
