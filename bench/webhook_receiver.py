"""A webhook receiver for bench/webhook_crash.sh: verifies every request with `standardwebhooks`, notes its
webhook-id in IDS_FILE (one line per request received), and never answers the first request (the server is
killed while waiting for it).

Usage: webhook_receiver.py PORT SECRET_FILE IDS_FILE
"""
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook

port, secret_file, ids_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
seen = 0


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        global seen
        body = self.rfile.read(int(self.headers["content-length"])).decode()
        secret = open(secret_file).read().strip()
        event = Webhook(secret).verify(body, dict(self.headers))
        with open(ids_file, "a") as f:
            f.write(f"{event['id']}\n")
        seen += 1
        if seen == 1:
            time.sleep(3600)  # the first delivery hangs until its sender is killed
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", port), Hook).serve_forever()
