"""A third-party tus client (tuspy) against the sandbox's standalone tus endpoint.

Usage: tuspy_client.py ENDPOINT FILE CHUNK_SIZE CHUNKS_BEFORE_INTERRUPT

Creates an upload at ENDPOINT (POST /upload), sends CHUNKS_BEFORE_INTERRUPT chunks, then drops
that uploader as an interrupted client would, and finishes with a new uploader resuming from the
upload URL (tuspy asks the server for the offset with HEAD). Prints one JSON line with the upload
URL and the offsets seen. Exit status 3 when tuspy is not installed, so the caller can skip.
"""

import json
import sys

try:
    from tusclient import client
except ImportError:
    print("tuspy is not installed (pip install tuspy)", file=sys.stderr)
    sys.exit(3)


def main() -> int:
    endpoint, path, chunk_size, chunks = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    tus = client.TusClient(endpoint)

    first = tus.uploader(path, chunk_size=chunk_size, metadata={"filename": "sample.bin"}, upload_checksum=True)
    for _ in range(chunks):
        first.upload_chunk()
    url = first.url
    interrupted_at = first.offset
    del first

    resumed = tus.uploader(path, url=url, chunk_size=chunk_size, upload_checksum=True)
    resumed_from = resumed.offset
    resumed.upload()

    print(json.dumps({
        "url": url,
        "interruptedAt": interrupted_at,
        "resumedFrom": resumed_from,
        "finalOffset": resumed.offset,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
