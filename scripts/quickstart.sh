#!/usr/bin/env bash
# The quick start: builds, starts the embedded Sandbox (a local implementation of Vimeo's upload API) on
# 127.0.0.1, and runs Workflows/quickstart.json over samples/ against it. The Sandbox keeps its data in
# out/quickstart/sandbox and listens on SANDBOX_PORT (default 18089), so a second run, or a run after
# Ctrl-C, finds the same videos and uploads and continues.
set -euo pipefail
cd "$(dirname "$0")/.."
PIPELINE=.build/debug/pipeline
PORT=${SANDBOX_PORT:-18089}
mkdir -p out/quickstart/sandbox
"$PIPELINE" sandbox --port "$PORT" --data out/quickstart/sandbox > out/quickstart/sandbox.log 2>&1 &
sandbox=$!
trap 'kill $sandbox 2>/dev/null; wait $sandbox 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "^sandbox: " out/quickstart/sandbox.log 2>/dev/null && break
  kill -0 $sandbox 2>/dev/null || { cat out/quickstart/sandbox.log >&2; echo "quickstart: the sandbox did not start (is port $PORT free? set SANDBOX_PORT)" >&2; exit 1; }
  sleep 0.1
done
echo "quickstart: sandbox at http://127.0.0.1:$PORT (videos in out/quickstart/sandbox)"
status=0
VIMEO_TOKEN=sandbox-token "$PIPELINE" run Workflows/quickstart.json --var "api=http://127.0.0.1:$PORT" "$@" || status=$?
echo "quickstart: the videos on the sandbox:"
curl -sS -H "Authorization: bearer sandbox-token" "http://127.0.0.1:$PORT/me/videos?fields=uri,name,link,upload.status" \
  | python3 -c 'import json,sys; [print("  %s  %-24s %s  (upload %s)" % (v["uri"], v["name"], v["link"], v["upload"]["status"])) for v in json.load(sys.stdin)["data"]]'
exit $status
