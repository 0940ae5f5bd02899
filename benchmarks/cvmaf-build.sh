#!/usr/bin/env bash
# What the vendored libvmaf (Sources/CVMAF and Sources/CVMAFx86) adds to a clean build: replays SwiftPM's own
# compile commands for the targets' files (from .build/debug.yaml, and .build/release.yaml when a release build exists) one after another into
# a temporary folder, and prints their CPU time. Build once first (`swift build`); nothing of .build is changed.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for manifest in .build/debug.yaml .build/release.yaml; do
  [ -f "$manifest" ] || continue
  python3 - "$manifest" "$work" >"$work/commands" <<'PY'
import json, re, shlex, sys
manifest, work = sys.argv[1], sys.argv[2]
text = open(manifest).read()
for n, match in enumerate(re.finditer(r'description: "Compiling CVMAF(?:x86)? [^"]*"\n\s*args: (\[.*\])', text)):
    args = json.loads(match.group(1))
    args = [a for a in args if a != "-index-store-path" and not a.endswith("/index/store")]
    out = args.index("-o")
    args[out + 1] = f"{work}/{n}.o"
    if "-MF" in args:
        args[args.index("-MF") + 1] = f"{work}/{n}.d"
    print(shlex.join(args))
PY
  files=$(wc -l <"$work/commands")
  replay() {  # label commands-file
    /usr/bin/time -f "%U %S %e" -o "$work/time" bash "$2"
    read -r user system wall <"$work/time"
    printf '%s: %s files of CVMAF and CVMAFx86, %.1f s CPU (%.1f s wall, one after another)\n' "$1" "$files" \
      "$(echo "$user + $system" | bc)" "$wall"
  }
  replay "$manifest" "$work/commands"
  if [ "$manifest" = .build/debug.yaml ] && [ ! -f .build/release.yaml ]; then
    # No release build to read: the debug commands at -O2 (SwiftPM's level for C in release) stand in for it.
    sed 's/ -O0 / -O2 /; s/ -g / /' "$work/commands" >"$work/optimized"
    replay "$manifest at -O2" "$work/optimized"
  fi
done
