#!/usr/bin/env bash
# Builds StageKit's DocC catalog (Sources/StageKit/StageKit.docc: the reference of StageKit's public API, the
# overview, and the tutorial that writes a stage) into .build/docs/StageKit, a static site:
#
#   python3 -m http.server -d .build/docs/StageKit 8000   # then open http://127.0.0.1:8000/documentation/stagekit
#
# Fails on any warning DocC reports (a link to a symbol that does not exist, a tutorial file that is missing), so
# that the catalog cannot rot. `make test` runs it after the tests; it reuses the debug build, so it only extracts
# the symbol graphs and converts the catalog.
#
# It calls the toolchain's docc directly: the package gains no dependency on swift-docc-plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
DOCC=${DOCC:-$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/docc}
out=.build/docs
start=$SECONDS

rm -rf "$out"
mkdir -p "$out/symbol-graphs"
# The symbol graphs of the package's modules, from the debug build (built first if it is not up to date).
$SWIFT package dump-symbol-graph --minimum-access-level public --skip-synthesized-members --emit-extension-block-symbols > "$out/dump.log" 2>&1 \
  || { cat "$out/dump.log" >&2; exit 1; }
graphs=$(sed -n 's/^Files written to //p' "$out/dump.log" | tail -1)
[ -n "$graphs" ] || graphs=.build/$(uname -m)-unknown-linux-gnu/symbolgraph
cp "$graphs"/StageKit.symbols.json "$graphs"/StageKit@*.symbols.json "$out/symbol-graphs/" 2>/dev/null \
  || cp "$graphs"/StageKit.symbols.json "$out/symbol-graphs/"

"$DOCC" convert Sources/StageKit/StageKit.docc \
  --fallback-display-name StageKit --fallback-bundle-identifier media-pipeline.StageKit \
  --additional-symbol-graph-dir "$out/symbol-graphs" \
  --transform-for-static-hosting --output-path "$out/StageKit" \
  --warnings-as-errors 2>&1 | tee "$out/docc.log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || { echo "docs: docc failed (its warnings are errors here); see above" >&2; exit "$status"; }
echo "docs: .build/docs/StageKit written in $((SECONDS - start)) s"
