#!/usr/bin/env python3
"""Signs one request with botocore, as a second opinion for SigV4Tests.swift.

Reads a JSON object on stdin:
  method, url, headers ([[name, value], ...]), payload_hash, access_key_id,
  secret_access_key, session_token (or null), region, service,
  s3 (true: S3SigV4Auth / S3SigV4QueryAuth), timestamp (seconds since 1970), expires.
Prints a JSON object:
  headers        all headers of the request after botocore's header-form signing
  presigned_url  the URL after botocore's query-form signing
"""

import datetime
import json
import sys

import botocore.auth
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth, SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def with_payload_hash(signer_class, payload_hash):
    """botocore hashes the body itself; the test hands it the body's hash instead."""

    class FixedPayload(signer_class):
        def payload(self, request):
            return payload_hash

    return FixedPayload


def main():
    if not hasattr(botocore.auth, "get_current_datetime"):
        sys.exit(f"botocore {botocore.__version__} is too old: no get_current_datetime to fix the signing time")
    spec = json.load(sys.stdin)
    moment = datetime.datetime.fromtimestamp(spec["timestamp"], tz=datetime.timezone.utc)
    botocore.auth.get_current_datetime = lambda *args, **kwargs: moment.replace(tzinfo=None)
    credentials = Credentials(spec["access_key_id"], spec["secret_access_key"], spec["session_token"])

    def request():
        fresh = AWSRequest(method=spec["method"], url=spec["url"])
        for name, value in spec["headers"]:
            fresh.headers[name] = value  # appends, so a repeated name stays repeated
        return fresh

    header_class = with_payload_hash(S3SigV4Auth if spec["s3"] else SigV4Auth, spec["payload_hash"])
    signed = request()
    header_class(credentials, spec["service"], spec["region"]).add_auth(signed)

    # S3 presigned URLs always use UNSIGNED-PAYLOAD, which S3SigV4QueryAuth knows by itself.
    query_class = S3SigV4QueryAuth if spec["s3"] else with_payload_hash(SigV4QueryAuth, spec["payload_hash"])
    presigned = request()
    query_class(credentials, spec["service"], spec["region"], expires=spec["expires"]).add_auth(presigned)

    json.dump({"headers": dict(signed.headers.items()), "presigned_url": presigned.url}, sys.stdout)


if __name__ == "__main__":
    main()
