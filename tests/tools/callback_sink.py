#!/usr/bin/env python3
"""An HTTP endpoint for callback_url tests, on loopback only.

    callback_sink.py PORT_FILE BODIES_FILE FAIL_FIRST

Answers the first FAIL_FIRST POSTs with 500, then 200; appends every body it
receives (one line each, with the status it answered) to BODIES_FILE. Runs
until killed by the test that started it.
"""
import http.server
import os
import sys

port_file, bodies_file, fail_first = sys.argv[1], sys.argv[2], int(sys.argv[3])
seen = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length).decode("utf-8", "replace")
        seen += 1
        code = 500 if seen <= fail_first else 200
        with open(bodies_file, "a") as f:
            f.write(f"{code} {body}\n")
        self.send_response(code)
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
