# Builds the ledger a first run of benchmarks/batch.sh's workflow leaves over in/ (COUNT files made as batch.sh
# makes them), row by row as a real run's ledger holds them (same columns, fingerprints, stat data and record
# shapes), starting from a copy of a real run's ledger (TEMPLATE, for its schema and the workflow's digest).
# A first run of a million files takes about an hour on a 2-core host; this takes a few minutes.
# Usage, in the folder with in/ and wf.json: python3 batch-ledger.py COUNT TEMPLATE .pipeline/ledger.sqlite
import hashlib, os, shutil, sqlite3, struct, sys, time
count, template, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
shutil.copy(template, out)
db = sqlite3.connect(out)
root = os.path.abspath("in")
digest = db.execute("SELECT digest FROM items LIMIT 1").fetchone()[0]
for table in ["stages", "paths", "versions", "items", "files", "runs", "itemTallies", "doneMinutes", "sqlite_sequence"]:
    db.execute(f"DELETE FROM {table}")
db.execute("INSERT INTO runs(workflow, file, stages, startedAt, finishedAt, summary, newItems, itemsBefore) VALUES ('bench-batch', ?, 'first\nsecond', ?, ?, '{}', ?, 0)", (os.path.abspath("wf.json"), time.time(), time.time(), count))
stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
def record(stage, options, seconds):
    import json
    return json.dumps({"attempts": 1, "finishedAt": stamp, "intents": {}, "options": options,
        "optionsHash": hashlib.md5(json.dumps(options).encode()).hexdigest(), "outputs": options, "seconds": seconds,
        "stage": stage, "startedAt": stamp, "status": "succeeded", "uses": "set"}, sort_keys=True, separators=(",", ":"))
now = time.time()
for index in range(count):
    relative = f"d{index // 1000:03d}/f{index:06d}.txt"
    path = f"{root}/{relative}"
    info = os.stat(path)
    content = f"file {index}\n".encode()
    fingerprint = "full:%d:%s" % (len(content), hashlib.sha256(struct.pack("<q", len(content)) + content).hexdigest()[:32])
    mtime = info.st_mtime_ns / 1e9
    item = index + 1
    db.execute("INSERT INTO items VALUES (?, 'bench-batch', 1, ?, ?, ?, ?, ?, 'succeeded', ?, NULL, NULL, NULL, ?)",
               (item, fingerprint, path, relative, len(content), mtime, digest, now))
    db.execute("INSERT INTO versions VALUES (?, 1, ?, ?, ?)", (item, fingerprint, path, now))
    db.execute("INSERT INTO files VALUES (?, ?, ?, ?, ?, 'sampled', ?, NULL)",
               (path, len(content), info.st_mtime_ns, info.st_ino, info.st_dev, fingerprint))
    stem = f"f{index:06d}"
    db.execute("INSERT INTO stages VALUES (?, 1, 'first', 'succeeded', ?)", (item, record("first", {"name": stem, "size": len(content)}, 0.001)))
    db.execute("INSERT INTO stages VALUES (?, 1, 'second', 'succeeded', ?)", (item, record("second", {"label": f"{stem}-{len(content)}"}, 0)))
db.commit()
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
