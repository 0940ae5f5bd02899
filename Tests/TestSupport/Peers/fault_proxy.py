"""A fault-injecting HTTP/1.1 reverse proxy on 127.0.0.1, for testing upload clients against real servers.

Usage: python3 fault_proxy.py STATE_DIR UPSTREAM_PORT [--seed N] [--error-rate F] [--reset-rate F]
                              [--stall-rate F] [--stall-seconds S] [--stall-headroom BYTES]
STATE_DIR is the scratch folder every peer script gets; it is unused. The proxy listens on an ephemeral
port, prints it on the first line of stdout, then serves until killed. Requests and responses go through
byte for byte (keep-alive, Content-Length request bodies, Content-Length, chunked or close-delimited
responses); each request gets a fresh upstream connection, so the upstream's idle timeouts never bite.

Every request, the first of a connection included, is numbered in arrival order; request N's fate comes
from random.Random(f"{seed}:{N}") alone (one roll against the cumulative rates), so a seed always gives
the same sequence of faults:
  error  (--error-rate, any request): the proxy reads the whole body itself (never contacting the
         upstream) and answers 500, 503 or 429 (the last two with Retry-After: 1); the connection stays
         usable.
  reset  (--reset-rate, requests with a body): a random prefix of the body is forwarded, then the
         upstream connection is closed (it sees a body cut short, as after a network failure) and the
         client's is reset (RST).
  stall  (--stall-rate, requests with a body): a random prefix is forwarded and the upstream is closed at
         once (a server that locks the upload for the length of a request, as tuspyserver does, is not
         wedged for the whole stall), then the client's connection is neither read nor answered for
         --stall-seconds (default 60) and is reset. The client's kernel and HTTP library swallow the last
         few MiB of a body whatever the proxy does (here up to net.ipv4.tcp_wmem's maximum), and a client
         that has handed over its whole body sees a missing answer, not a stalled upload. So a stall stops
         at least --stall-headroom bytes (default: that maximum + 4 MiB) before the end of the body, and
         smaller bodies are never stalled (they pass).
GET /__proxy_stats is answered by the proxy: {"requests": N, "errors": N, "resets": N, "stalls": N, "abandoned": N}.
abandoned counts the stalls the client gave up on itself: while the proxy still held the stalled request, a
request for the same target came (a retry, an offset query). A client that waits for the reset instead
leaves its stalls out of that count.
"""
import argparse
import asyncio
import json
import random
import socket
import struct

stats = {"requests": 0, "errors": 0, "resets": 0, "stalls": 0, "abandoned": 0}
held = {}  # the stalls being held: request number -> request target
REASONS = {200: "OK", 411: "Length Required", 429: "Too Many Requests", 500: "Internal Server Error",
           503: "Service Unavailable"}


def default_headroom():
    """The most a client's kernel may buffer on a connection (tcp_wmem's maximum), plus 4 MiB for the
    proxy's own buffers and the client's HTTP library."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as file:
            return int(file.read().split()[2]) + (4 << 20)
    except (OSError, ValueError, IndexError):
        return 8 << 20


def header(headers, name):
    """The first value of a header (name in lower case), or ""."""
    return next((value for key, value in headers if key.lower() == name), "")


async def read_head(reader):
    """(start line, raw bytes, [(name, value)]) of the next message head; None at a clean end."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        if error.partial:
            raise ConnectionError("closed in the middle of a message head")
        return None
    lines = raw.decode("latin-1").split("\r\n")[:-2]
    return lines[0], raw, [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:] if ":" in line]


async def pipe(reader, writer, count):
    """Copies count bytes from reader to writer (None: reads and drops them)."""
    while count > 0:
        data = await reader.read(min(count, 1 << 16))
        if not data:
            raise ConnectionError("closed in the middle of a body")
        count -= len(data)
        if writer is not None:
            writer.write(data)
            await writer.drain()


def answer(writer, status, body, method, extra="", kind="text/plain"):
    """An answer of the proxy's own (without its body to a HEAD)."""
    payload = b"" if method == "HEAD" else body.encode()
    writer.write(f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Length: {len(body.encode())}\r\n"
                 f"Content-Type: {kind}\r\n{extra}\r\n".encode() + payload)


def reset(writer):
    """Closes the client's connection with a RST, as a dropped network path shows up."""
    try:
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    writer.transport.abort()


def decide(number, length, options):
    """The fate of request `number` with a body of `length` bytes: (kind, status code or prefix length)."""
    rng = random.Random(f"{options.seed}:{number}")
    roll = rng.random()
    if roll < options.error_rate:
        return "error", rng.choice([500, 503, 429])
    roll -= options.error_rate
    if length > 0 and roll < options.reset_rate:
        return "reset", int(rng.random() * length)
    roll -= options.reset_rate
    if length > options.stall_headroom and roll < options.stall_rate:
        return "stall", int(rng.random() * (length - options.stall_headroom))
    return "pass", 0


async def relay_response(method, upstream, client):
    """Relays one response from the upstream to the client; whether the connection may be kept."""
    while True:
        head = await read_head(upstream)
        if head is None:
            raise ConnectionError("the upstream closed without answering")
        start, raw, headers = head
        client.write(raw)
        status = int(start.split()[1])
        if status >= 200:
            break
    keep = start.startswith("HTTP/1.1") and header(headers, "connection").lower() != "close"
    if method == "HEAD" or status in (204, 304):
        pass
    elif "chunked" in header(headers, "transfer-encoding").lower():
        while True:
            line = await upstream.readuntil(b"\r\n")
            client.write(line)
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while line != b"\r\n":  # trailers, then the blank line
                    line = await upstream.readuntil(b"\r\n")
                    client.write(line)
                break
            await pipe(upstream, client, size + 2)
    elif header(headers, "content-length"):
        await pipe(upstream, client, int(header(headers, "content-length")))
    else:  # delimited by the upstream closing
        while data := await upstream.read(1 << 16):
            client.write(data)
            await client.drain()
        keep = False
    await client.drain()
    return keep


async def send_body(client, upstream, count):
    """Forwards the request body; False when the upstream stopped taking it (it answered early)."""
    while count > 0:
        data = await client.read(min(count, 1 << 16))
        if not data:
            raise ConnectionError("the client closed in the middle of a body")
        count -= len(data)
        try:
            upstream.write(data)
            await upstream.drain()
        except ConnectionError:
            return False
    return True


async def forward(method, raw, length, reader, writer, options):
    """Passes one request through; whether the client connection may be kept."""
    up_reader, up_writer = await asyncio.open_connection("127.0.0.1", options.upstream_port)
    up_writer.write(raw)
    body = asyncio.create_task(send_body(reader, up_writer, length))
    response = asyncio.create_task(relay_response(method, up_reader, writer))
    try:
        await asyncio.wait({body, response}, return_when=asyncio.FIRST_COMPLETED)
        if body.done() and body.exception():  # the client went away: nobody to answer
            raise body.exception()
        keep = await response
        # Answered before the whole body came (the upstream refused it): the rest is not read, so close.
        return keep and body.done() and body.result()
    finally:
        for task in (body, response):
            task.cancel()
        up_writer.close()


async def serve(reader, writer, options):
    try:
        while (head := await read_head(reader)) is not None:
            start, raw, headers = head
            method, target = start.split(" ")[:2]
            if "chunked" in header(headers, "transfer-encoding").lower():
                answer(writer, 411, "fault_proxy: request bodies need a Content-Length\n", method, "Connection: close\r\n")
                break
            length = int(header(headers, "content-length") or 0)
            if target == "/__proxy_stats":
                await pipe(reader, None, length)
                answer(writer, 200, json.dumps(stats), method, kind="application/json")
                continue
            stats["requests"] += 1
            number = stats["requests"]
            for stalled in [stall for stall, stalled_target in held.items() if stalled_target == target]:
                del held[stalled]
                stats["abandoned"] += 1
            kind, value = decide(number, length, options)
            if kind != "pass" and header(headers, "expect").lower() == "100-continue":
                writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            if kind == "error":
                await pipe(reader, None, length)
                stats["errors"] += 1
                answer(writer, value, f"fault_proxy: injected {value}\n", method, "" if value == 500 else "Retry-After: 1\r\n")
                await writer.drain()
            elif kind in ("reset", "stall"):
                _, up_writer = await asyncio.open_connection("127.0.0.1", options.upstream_port)
                try:
                    up_writer.write(raw)
                    await pipe(reader, up_writer, value)
                finally:
                    up_writer.close()  # the upstream sees the body cut short
                stats[kind + "s"] += 1
                if kind == "stall":
                    held[number] = target
                    await asyncio.sleep(options.stall_seconds)
                    held.pop(number, None)
                reset(writer)
                return
            elif not await forward(method, raw, length, reader, writer, options):
                break
            if header(headers, "connection").lower() == "close":
                break
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError, IndexError):
        pass
    writer.close()


async def main():
    parser = argparse.ArgumentParser(description="A fault-injecting HTTP/1.1 reverse proxy.")
    parser.add_argument("state_dir")
    parser.add_argument("upstream_port", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--error-rate", type=float, default=0.0)
    parser.add_argument("--reset-rate", type=float, default=0.0)
    parser.add_argument("--stall-rate", type=float, default=0.0)
    parser.add_argument("--stall-seconds", type=float, default=60.0)
    parser.add_argument("--stall-headroom", type=int, default=default_headroom())
    options = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A fixed receive buffer (inherited by accepted sockets) stops Linux from growing it to tens of MiB,
    # which would swallow a stalled body on the proxy's side.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 256 << 10)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    server = await asyncio.start_server(lambda r, w: serve(r, w, options), sock=listener)
    print(listener.getsockname()[1], flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
