"""A stand-in for ApsaraVideo VOD and OSS that checks every request's signature with the official SDKs'
own signing code (aliyun-python-sdk-core's RPC composer, oss2's ProviderAuthV4 and, for a V1-signed request,
ProviderAuth), so a client is known to sign as Alibaba's SDKs do. It answers just enough for a create and a
multipart upload; each OSS request's log entry says which signature it carried ("signature": "v4" or "v1").

Usage: aliyun_verifier.py FOLDER ACCESS_KEY_ID ACCESS_KEY_SECRET; prints its port, then serves. Every
request is logged to FOLDER/requests.jsonl as {"kind", "action", "verified"}.
"""
import base64
import hashlib
import http.server
import json
import os
import sys
import threading
import urllib.parse

import oss2
from aliyunsdkcore.auth.composer import rpc_signature_composer as rpc

folder, key_id, key_secret = sys.argv[1], sys.argv[2], sys.argv[3]
sts = {"AccessKeyId": "STS.verifier", "AccessKeySecret": "verifier-secret", "SecurityToken": "verifier-token"}
lock = threading.Lock()
parts = {}


def log(entry):
    with lock, open(os.path.join(folder, "requests.jsonl"), "a") as out:
        out.write(json.dumps(entry) + "\n")


class OSSRequest:
    """What oss2's signers read of a request."""

    def __init__(self, method, headers, params):
        self.method, self.headers, self.params = method, headers, params
        self.region, self.cloudbox_id, self.product = "cn-shanghai", None, "oss"


def v4_expected(method, headers, params, bucket, key, credentials):
    """The V4 Authorization header oss2 computes for the request at its own x-oss-date (no additional headers)."""
    auth = oss2.ProviderAuthV4(oss2.credentials.StaticCredentialsProvider(
        sts["AccessKeyId"], sts["AccessKeySecret"], sts["SecurityToken"]))
    date_time = headers.get("x-oss-date", "")
    signature = auth._ProviderAuthV4__make_signature(
        OSSRequest(method, headers, params), bucket, key, None, credentials, date_time)
    scope = "%s/cn-shanghai/oss/aliyun_v4_request" % date_time[:8]
    return "OSS4-HMAC-SHA256 Credential=%s/%s, Signature=%s" % (sts["AccessKeyId"], scope, signature)


def normal_v4(header):
    """A V4 Authorization header with its fields in one order and spacing (OSS takes any)."""
    algorithm, _, fields = header.partition(" ")
    return algorithm + " " + ", ".join(sorted(part.strip() for part in fields.split(",")))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=None):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_POST(self):
        self.dispatch()

    def do_PUT(self):
        self.dispatch()

    def do_GET(self):
        self.dispatch()

    def do_DELETE(self):
        self.dispatch()

    def do_HEAD(self):
        self.dispatch()

    def dispatch(self):
        url = urllib.parse.urlsplit(self.path)
        params = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
        if url.path == "/" and "Action" in params:
            return self.rpc(params)
        return self.oss(url, params)

    def rpc(self, params):
        body = self.body()
        provided = params.get("Signature")
        unsigned = {k: v for k, v in params.items() if k != "Signature"}
        string_to_sign = getattr(rpc, "__compose_string_to_sign")(self.command, unsigned)
        expected = getattr(rpc, "__get_signature")(string_to_sign, key_secret)
        verified = provided == expected and params.get("AccessKeyId") == key_id and not body
        log({"kind": "rpc", "action": params.get("Action"), "verified": verified})
        if not verified:
            return self.answer(400, json.dumps({"Code": "SignatureDoesNotMatch", "Message": string_to_sign}).encode())
        endpoint = "http://127.0.0.1:%d" % self.server.server_address[1]
        address = {"Endpoint": endpoint, "Bucket": "verifier", "FileName": "sv/verified/video.mp4"}
        auth = dict(sts, Expiration="3000", ExpireUTCTime="2099-01-01T00:00:00Z", Region="cn-shanghai")
        answer = {"RequestId": "verifier", "VideoId": "verified-video",
                  "UploadAddress": base64.b64encode(json.dumps(address).encode()).decode(),
                  "UploadAuth": base64.b64encode(json.dumps(auth).encode()).decode()}
        self.answer(200, json.dumps(answer).encode(), {"Content-Type": "application/json"})

    def oss(self, url, params):
        body = self.body()
        bucket, _, key = urllib.parse.unquote(url.path).lstrip("/").partition("/")
        headers = oss2.CaseInsensitiveDict(dict(self.headers.items()))
        credentials = oss2.credentials.Credentials(sts["AccessKeyId"], sts["AccessKeySecret"], sts["SecurityToken"])
        provided = headers.get("authorization", "")
        if provided.startswith("OSS4-HMAC-SHA256 "):
            signature = "v4"
            expected = v4_expected(self.command, headers, params, bucket, key, credentials)
            signed = normal_v4(provided) == normal_v4(expected)
        else:
            signature = "v1"
            auth = oss2.ProviderAuth(oss2.credentials.StaticCredentialsProvider(
                sts["AccessKeyId"], sts["AccessKeySecret"], sts["SecurityToken"]))
            expected = auth._ProviderAuth__make_signature(
                OSSRequest(self.command, headers, params), bucket, key, credentials)
            signed = provided == "OSS %s:%s" % (sts["AccessKeyId"], expected)
        verified = signed and headers.get("x-oss-security-token") == sts["SecurityToken"]
        action = self.command + " " + "&".join(sorted(k for k in params if k in ("uploads", "uploadId", "partNumber")))
        log({"kind": "oss", "action": action, "verified": verified, "signature": signature})
        if not verified:
            return self.answer(403, b"<Error><Code>SignatureDoesNotMatch</Code></Error>")
        if self.command == "POST" and "uploads" in params:
            xml = "<InitiateMultipartUploadResult><UploadId>verified-upload</UploadId></InitiateMultipartUploadResult>"
            return self.answer(200, xml.encode())
        if self.command == "PUT" and "partNumber" in params:
            etag = '"%s"' % hashlib.md5(body).hexdigest().upper()
            with lock:
                parts[int(params["partNumber"])] = body
            return self.answer(200, b"", {"ETag": etag})
        if self.command == "POST" and "uploadId" in params:
            with lock:
                whole = b"".join(parts[number] for number in sorted(parts))
            with open(os.path.join(folder, "object.bin"), "wb") as out:
                out.write(whole)
            xml = "<CompleteMultipartUploadResult><ETag>\"verified-%d\"</ETag></CompleteMultipartUploadResult>" % len(parts)
            return self.answer(200, xml.encode())
        if self.command == "GET" and "uploadId" in params:
            return self.answer(200, b"<ListPartsResult><IsTruncated>false</IsTruncated></ListPartsResult>")
        self.answer(204)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
