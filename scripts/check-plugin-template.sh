#!/usr/bin/env bash
# Builds a plugin made by the template (scripts/new-plugin.sh) against the SDK (sdk/), and runs its test: a
# plugin needs StageKit alone, so its build resolves and compiles only the SDK's packages (swift-log, swift-crypto,
# swift-nio and what they need), never the engine's. The DocC tutorial's stage and its tests
# (Tests/StageTutorialTests) go into the same plugin, so they too build and pass on the SDK's public API alone,
# and the tutorial's workflow then runs the plugin in the pipeline this repository builds.
#
# The plugin is written anew under .build-plugin/ on every run; its build folder is kept there, so a second run
# builds only what changed. `make test` runs this after the main suite. Prints how many packages the build
# resolved and how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
root=.build-plugin
plugin=$root/acme-tools
start=$SECONDS

rm -rf "$plugin"
mkdir -p "$root"
scripts/new-plugin.sh acme-tools "$plugin" > /dev/null
cp Tests/StageTutorialTests/ChecksumStage.swift "$plugin/Sources/AcmeTools/"
cp Sources/StageKit/StageKit.docc/Resources/plugin-01.swift "$plugin/Sources/AcmeTools/Plugin.swift"
# The tutorial's tests, as a plugin package holds them: in a test target of their own, importing the plugin.
sed 's/^import Testing$/import Testing\n\n@testable import AcmeTools/' Tests/StageTutorialTests/ChecksumStageTests.swift \
  > "$plugin/Tests/AcmeToolsTests/ChecksumStageTests.swift"

$SWIFT build --package-path "$plugin" --scratch-path "$root/build" --build-tests
$SWIFT test --package-path "$plugin" --scratch-path "$root/build" --skip-build

# The plugin in pipeline, as the tutorial's last step runs it: validate refuses a part size out of bounds, and
# the workflow runs over the samples. Skipped when pipeline is not built (make test builds it first).
if [ -x .build/debug/pipeline ]; then
  here=$(pwd)
  work=$root/run
  rm -rf "$work"
  mkdir -p "$work"
  sed -e "s|\.build/debug/libAcmeTools.so|$here/$root/build/debug/libAcmeTools.so|" \
    -e "s|\"path\": \"media\"|\"path\": \"$here/samples\"|" \
    Sources/StageKit/StageKit.docc/Resources/workflow-01.json > "$work/workflow.json"
  sed 's/"16MiB"/"100MiB"/' "$work/workflow.json" > "$work/too-large.json"
  (
    cd "$work"
    "$here/.build/debug/pipeline" validate workflow.json
    status=0
    "$here/.build/debug/pipeline" validate too-large.json > too-large.log 2>&1 || status=$?
    grep -q "partSize" too-large.log && [ "$status" -eq 2 ] \
      || { cat too-large.log >&2; echo "plugin template: validate took a part size of 100MiB" >&2; exit 1; }
    "$here/.build/debug/pipeline" run workflow.json
  )
fi

packages=$(ls "$root/build/checkouts" | wc -l)
echo "plugin template: built and tested against sdk/ in $((SECONDS - start)) s; $packages packages resolved:" \
  $(ls "$root/build/checkouts")
if [ "$packages" -gt 7 ]; then
  echo "plugin template: a plugin should need 7 packages (swift-log, swift-crypto, swift-asn1, swift-nio," \
    "swift-atomics, swift-collections, swift-system); check sdk/Package.swift" >&2
  exit 1
fi
