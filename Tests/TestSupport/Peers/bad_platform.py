"""A platform that answers POST /me/videos wrongly, for the tests of clear errors.

Usage: python3 bad_platform.py STATE_DIR MODE
MODE: no-upload-link (a video without upload.upload_link), html (an HTML error page with status 200),
      error-body (status 200 with a JSON error body). GET /me answers a normal quota.
Prints its port on the first line of stdout, then serves until killed.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

mode = sys.argv[2]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type="application/json"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply(200, json.dumps({"uri": "/users/1", "upload_quota": {"space": {"free": 1 << 40, "max": 1 << 40, "used": 0}}}))

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if mode == "no-upload-link":
            self.reply(200, json.dumps({"uri": "/videos/1", "link": "http://x/1", "upload": {"approach": "tus", "status": "in_progress"}}))
        elif mode == "html":
            self.reply(200, "<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
        else:
            self.reply(200, json.dumps({"error": "Something strange happened.", "error_code": 9999}))


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
