# The batch of benchmarks/batch.sh, sourced: `make_batch COUNT` writes COUNT small files into in/ (1,000 per
# folder) and wf.json, a workflow of two cheap stages over them, in the current folder. Needs python3.

make_batch() {
  python3 - "$1" <<'PY'
import os, sys
count = int(sys.argv[1])
for folder in range(0, count, 1000):
    os.makedirs(f"in/d{folder // 1000:03d}", exist_ok=True)
for index in range(count):
    with open(f"in/d{index // 1000:03d}/f{index:06d}.txt", "w") as f:
        f.write(f"file {index}\n")
PY
  cat >wf.json <<'JSON'
{"version": 1, "name": "bench-batch", "inputs": {"path": "in", "recursive": true},
 "stages": [
  {"id": "first", "uses": "set", "with": {"name": "${input.stem}", "size": "${input.size}"}},
  {"id": "second", "uses": "set", "with": {"label": "${first.name}-${first.size}"}}
 ]}
JSON
}
