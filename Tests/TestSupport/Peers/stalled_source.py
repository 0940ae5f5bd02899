"""An HTTP/1.1 server on 127.0.0.1 that starts sending a file and never finishes: the source of a download that is
still under way when its client stops.

Usage: python3 stalled_source.py STATE_DIR [--length N] [--send N]
STATE_DIR is the scratch folder every peer script gets; it is unused. The server prints its port on the first
line of stdout, then serves until killed. Every request is answered 200 with `Content-Length: N` (default 1 MiB)
and the first --send bytes of the body (default 1000, each 0x5A); then the server sends nothing more and keeps the
connection open until the client closes it.
"""

import argparse
import asyncio
import socket
import sys


async def serve(reader, writer, length, send):
    await reader.readuntil(b"\r\n\r\n")
    writer.write(f"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nContent-Type: video/mp4\r\n\r\n".encode())
    writer.write(b"\x5a" * send)
    await writer.drain()
    # Nothing more: wait for the client to give up.
    while await reader.read(64 << 10):
        pass
    writer.close()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("state_dir")
    parser.add_argument("--length", type=int, default=1 << 20)
    parser.add_argument("--send", type=int, default=1000)
    arguments = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    server = await asyncio.start_server(
        lambda reader, writer: serve(reader, writer, arguments.length, arguments.send), sock=listener
    )
    print(listener.getsockname()[1], flush=True)
    sys.stdout.close()
    async with server:
        await server.serve_forever()


asyncio.run(main())
