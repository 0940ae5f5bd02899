"""Checks on an S3 server with boto3, for the tests: a client outside our code.

Usage: python3 s3_tool.py PORT sha256 BUCKET KEY      -> hex SHA-256 of the object
       python3 s3_tool.py PORT uploads BUCKET         -> number of unfinished multipart uploads
       python3 s3_tool.py PORT parts BUCKET KEY ID    -> number of parts of an unfinished upload
       python3 s3_tool.py PORT types BUCKET KEY...    -> each object's Content-Type, a line each
       python3 s3_tool.py PORT objects BUCKET PREFIX  -> "KEY SHA256" for every object under PREFIX, sorted
"""
import hashlib
import sys

import boto3

port, command, bucket = sys.argv[1], sys.argv[2], sys.argv[3]
s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
if command == "sha256":
    digest = hashlib.sha256()
    for chunk in s3.get_object(Bucket=bucket, Key=sys.argv[4])["Body"].iter_chunks(1 << 20):
        digest.update(chunk)
    print(digest.hexdigest())
elif command == "uploads":
    print(len(s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])))
elif command == "parts":
    print(len(s3.list_parts(Bucket=bucket, Key=sys.argv[4], UploadId=sys.argv[5]).get("Parts", [])))
elif command == "types":
    for key in sys.argv[4:]:
        print(s3.head_object(Bucket=bucket, Key=key)["ContentType"])
elif command == "objects":
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=sys.argv[4])
    for key in sorted(item["Key"] for page in pages for item in page.get("Contents", [])):
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        print(key, hashlib.sha256(body).hexdigest())
