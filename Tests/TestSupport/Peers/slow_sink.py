"""An HTTP/1.1 server on 127.0.0.1 that reads request bodies slowly and keeps nothing: the peer that shows
whether a client reads its body ahead of what the network takes.

Usage: python3 slow_sink.py STATE_DIR [--bytes-per-second N] [--close-after N]
STATE_DIR is the scratch folder every peer script gets; it is unused. The server prints its port on the first
line of stdout, then serves until killed. Its receive buffer is small, so the client's socket fills soon. A
request's Content-Length body is read at N bytes per second (default 16 MiB) and discarded, then answered
204 with the byte count in an X-Received header and the SHA-256 of the bytes (hex) in X-SHA256. With
--close-after, the server drops the connection once it has read that many bytes of a body, as a server that
fails half way does.
"""

import argparse
import asyncio
import hashlib
import socket
import sys


async def serve(reader, writer, rate, close_after):
    while True:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        received, digest, loop = 0, hashlib.sha256(), asyncio.get_running_loop()
        started = loop.time()
        while received < length:
            part = await reader.read(min(64 << 10, length - received))
            if not part:
                return
            received += len(part)
            digest.update(part)
            if close_after is not None and received >= close_after:
                writer.close()
                return
            ahead = received / rate - (loop.time() - started)
            if ahead > 0:
                await asyncio.sleep(ahead)
        writer.write(
            f"HTTP/1.1 204 No Content\r\nX-Received: {received}\r\nX-SHA256: {digest.hexdigest()}\r\n\r\n".encode()
        )
        await writer.drain()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("state_dir")
    parser.add_argument("--bytes-per-second", type=int, default=16 << 20)
    parser.add_argument("--close-after", type=int)
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    listener.bind(("127.0.0.1", 0))
    server = await asyncio.start_server(
        lambda reader, writer: serve(reader, writer, arguments.bytes_per_second, arguments.close_after),
        sock=listener,
        limit=64 << 10,
    )
    print(listener.getsockname()[1], flush=True)
    sys.stdout.close()
    async with server:
        await server.serve_forever()


asyncio.run(main())
