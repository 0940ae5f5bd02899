"""moto's S3 server (a third-party S3 implementation) on 127.0.0.1 with an ephemeral port.

Usage: python3 s3_server.py DATA_DIR [BUCKET...]
Creates the buckets, prints the port on the first line of stdout, then serves until killed.
GET /__stats answers {"received": N, "receivedByPath": {"/bucket/key": N, ...}}: the PUT body bytes that
reached the server (parts kept or not), in all and for each object, so tests can measure how many bytes a
client sent more than once, and how far the upload of one object has got.
GET /__timeline answers {"parts": [[start, end], ...], "completes": [[start, end], ...]}: when each
UploadPart and CompleteMultipartUpload request arrived and was answered (seconds, server clock), so a
benchmark can time any client's parts phase apart from moto's slow Complete, and "completed": [[start,
end, path], ...], the same for each CompleteMultipartUpload and each PutObject answered 200 with its path
(/bucket/key), so a test can check the order objects appeared in; ?reset=1 clears it.
"""
import json
import sys
import threading
import time
from urllib.parse import parse_qs

import boto3
from moto.server import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import make_server

received = 0
received_by_path = {}
lock = threading.Lock()
timeline = {"parts": [], "completes": [], "completed": []}


class CountingInput:
    def __init__(self, stream, path):
        self.stream = stream
        self.path = path

    def _count(self, data):
        global received
        with lock:
            received += len(data)
            received_by_path[self.path] = received_by_path.get(self.path, 0) + len(data)
        return data

    def read(self, *args):
        return self._count(self.stream.read(*args))

    def readline(self, *args):
        return self._count(self.stream.readline(*args))

    def __iter__(self):
        for line in self.stream:
            yield self._count(line)


moto = DomainDispatcherApplication(create_backend_app)


def app(environ, start_response):
    if environ.get("PATH_INFO") == "/__stats":
        with lock:
            body = json.dumps({"received": received, "receivedByPath": received_by_path}).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    if environ.get("PATH_INFO") == "/__timeline":
        with lock:
            body = json.dumps(timeline).encode()
            if "reset=1" in environ.get("QUERY_STRING", ""):
                timeline["parts"], timeline["completes"], timeline["completed"] = [], [], []
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]
    method = environ.get("REQUEST_METHOD")
    query = parse_qs(environ.get("QUERY_STRING", ""))
    kind = "parts" if method == "PUT" and "partNumber" in query else (
        "completes" if method == "POST" and "uploadId" in query else None)
    if method == "PUT":
        environ["wsgi.input"] = CountingInput(environ["wsgi.input"], environ.get("PATH_INFO", ""))
    whole_put = method == "PUT" and "partNumber" not in query and "uploadId" not in query \
        and "HTTP_X_AMZ_COPY_SOURCE" not in environ and environ.get("PATH_INFO", "").count("/") > 1
    status = []

    def recording_start_response(line, headers, *rest):
        status.append(line)
        return start_response(line, headers, *rest)

    start = time.monotonic()
    answer = moto(environ, recording_start_response)
    if whole_put and status and status[0].startswith("200"):
        with lock:
            timeline["completed"].append([start, time.monotonic(), environ.get("PATH_INFO", "")])
    if kind:
        with lock:
            timeline[kind].append([start, time.monotonic()])
            if kind == "completes":
                timeline["completed"].append([start, time.monotonic(), environ.get("PATH_INFO", "")])
    return answer


server = make_server("127.0.0.1", 0, app, threaded=True)
port = server.server_address[1]
threading.Thread(target=server.serve_forever, daemon=True).start()
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
for bucket in sys.argv[2:]:
    s3.create_bucket(Bucket=bucket)
print(port, flush=True)
threading.Event().wait()
