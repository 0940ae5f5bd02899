"""A signing backend for presigned multipart uploads (the contract of Uppy's AWS S3 multipart plugin),
in front of moto's S3 server, signing part URLs with boto3.

Usage: python3 presign_backend.py STATE_DIR S3_PORT BUCKET
Prints its port on the first line of stdout, then serves until killed:
  POST   /uploads                         {filename, type, size, metadata} -> {uploadId, key}
  GET    /uploads/{uploadId}/{partNumber}?key=K -> {url, headers}
  GET    /uploads/{uploadId}?key=K          -> [{PartNumber, ETag, Size}]
  POST   /uploads/{uploadId}/complete?key=K {parts: [...]} -> {location, etag}
  DELETE /uploads/{uploadId}?key=K          -> 204
Requests without "Authorization: Bearer backend-secret" get 401.
"""
import json
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import boto3
from botocore.exceptions import ClientError

s3_port, bucket = sys.argv[2], sys.argv[3]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{s3_port}", region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, value=None):
        body = b"" if value is None else json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def route(self):
        if self.headers.get("Authorization") != "Bearer backend-secret":
            return self.reply(401, {"error": "unauthorized"})
        url = urlparse(self.path)
        parts = [unquote(p) for p in url.path.strip("/").split("/")]
        key = parse_qs(url.query).get("key", [""])[0]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        try:
            if self.command == "POST" and parts == ["uploads"]:
                key = f"presigned/{uuid.uuid4().hex}/{body['filename']}"
                upload = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType=body.get("type", "application/octet-stream"))
                return self.reply(200, {"uploadId": upload["UploadId"], "key": key})
            if self.command == "GET" and len(parts) == 3 and parts[0] == "uploads":
                url = s3.generate_presigned_url("upload_part", Params={"Bucket": bucket, "Key": key, "UploadId": parts[1],
                                                                       "PartNumber": int(parts[2])}, ExpiresIn=3600)
                return self.reply(200, {"url": url, "headers": {}})
            if self.command == "GET" and len(parts) == 2 and parts[0] == "uploads":
                listed = s3.list_parts(Bucket=bucket, Key=key, UploadId=parts[1]).get("Parts", [])
                return self.reply(200, [{"PartNumber": p["PartNumber"], "ETag": p["ETag"], "Size": p["Size"]} for p in listed])
            if self.command == "POST" and len(parts) == 3 and parts[2] == "complete":
                done = s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=parts[1], MultipartUpload={
                    "Parts": [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in body["parts"]]})
                return self.reply(200, {"location": done.get("Location", ""), "etag": done.get("ETag", "")})
            if self.command == "DELETE" and len(parts) == 2:
                s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=parts[1])
                return self.reply(204)
            return self.reply(404, {"error": "no such route"})
        except ClientError as error:
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 500)
            return self.reply(status, {"error": str(error)})

    do_GET = do_POST = do_DELETE = route


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
