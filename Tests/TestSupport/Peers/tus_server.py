"""tuspyserver (a third-party tus 1.0 server) on 127.0.0.1 with an ephemeral port.

Usage: python3 tus_server.py FILES_DIR
Prints the port on the first line of stdout, then serves until killed. Uploads live under /files/.
"""
import socket
import sys

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=sys.argv[1]))

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind(("127.0.0.1", 0))
sock.listen(128)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
