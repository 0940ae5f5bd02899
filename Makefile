# The commands the README names. Each installs what it needs first.
SWIFT ?= swift
SHELL := /bin/bash
PIPELINE = .build/debug/pipeline

.PHONY: deps build test lint tsan quickstart bench schema docs format

deps:
	scripts/install-deps.sh

build: deps
	$(SWIFT) build

## Builds and runs the whole test suite (unit and end-to-end tests of the built binary). Tests run one at a
## time: several spawn CPU-bound processes (x264, ffprobe) and measure how promptly cancellation works. When a
## test fails, its issues are printed again at the end, where a log's tail shows them.
test: deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel 2>&1 | tee .build/test.log; status=$${PIPESTATUS[0]}; \
	  if [ $$status -ne 0 ]; then echo "Failed tests and their issues:"; grep -A3 -E "^✘ Test .*(recorded|failed)" .build/test.log; fi; \
	  exit $$status

## Runs the quick-start workflow over the bundled samples.
quickstart: build
	scripts/quickstart.sh

## Prints the benchmark figures (release build).
bench: deps
	benchmarks/engine.sh
	benchmarks/batch.sh
	benchmarks/transcode.sh
	benchmarks/segments.sh
	benchmarks/upload.sh
	benchmarks/workers.sh
	benchmarks/farm.sh
	benchmarks/oss.sh
	benchmarks/codecs.sh
	benchmarks/branches.sh
	benchmarks/dashboard.sh
	benchmarks/ladder.sh
	benchmarks/hdr.sh
	benchmarks/stream.sh

## Regenerates the JSON Schema of workflows from the registered stages.
schema: build
	$(PIPELINE) schema > Workflows/workflow.schema.json

## Regenerates the stage reference (docs/stages.md) from the stages' declarations; a test fails while it is stale.
docs: build
	$(PIPELINE) stages --markdown > docs/stages.md

## Fails when a Swift file is not formatted as `make format` would write it.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift samples/plugin-hello/Sources samples/custom-pipeline/Sources

## Runs the concurrency-heavy tests under ThreadSanitizer (its own build folder, .build-tsan).
tsan: deps
	scripts/tsan.sh

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift samples/plugin-hello/Sources samples/custom-pipeline/Sources
