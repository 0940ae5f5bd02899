"""tuspyserver (a third-party tus 1.0 server) on 127.0.0.1 with an ephemeral port.

Usage: python3 tus_server.py FILES_DIR
Prints the port on the first line of stdout, then serves until killed. Uploads live under /files/.
GET /stats answers {"received": N}: the PATCH body bytes that reached the server, kept or not, so tests
can measure how many bytes a client sent more than once.
"""
import json
import socket
import sys

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router


class CountingMiddleware:
    def __init__(self, app):
        self.app = app
        self.received = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] == "/stats":
            body = json.dumps({"received": self.received}).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] == "http" and scope["method"] == "PATCH":
            async def counting_receive():
                message = await receive()
                if message["type"] == "http.request":
                    self.received += len(message.get("body", b""))
                return message
            return await self.app(scope, counting_receive, send)
        return await self.app(scope, receive, send)


app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=sys.argv[1]))

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(CountingMiddleware(app), log_level="warning", access_log=False)).run(sockets=[sock])
