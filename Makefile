# The commands the README names. Each installs what it needs first.
SWIFT ?= swift
SHELL := /bin/bash
PIPELINE = .build/debug/pipeline

.PHONY: deps deps-build build test lint tsan quickstart bench schema format docs plugin

deps:
	scripts/install-deps.sh

## Only what building pipeline and the quick start need (no test peers, PostgreSQL or Chromium).
deps-build:
	scripts/install-deps.sh --build

build: deps-build
	$(SWIFT) build

## Builds and runs the whole test suite (unit and end-to-end tests of the built binary). Tests run one at a
## time: several spawn CPU-bound processes (x264, ffprobe) and measure how promptly cancellation works. When a
## test fails, its issues are printed again at the end, where a log's tail shows them. Then builds StageKit's
## DocC catalog, and builds and tests a plugin made by the template against the SDK package (sdk/).
test: deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel 2>&1 | tee .build/test.log; status=$${PIPESTATUS[0]}; \
	  if [ $$status -ne 0 ]; then echo "Failed tests and their issues:"; grep -A3 -E "^✘ Test .*(recorded|failed)" .build/test.log; fi; \
	  exit $$status
	SWIFT=$(SWIFT) scripts/docs.sh
	SWIFT=$(SWIFT) scripts/check-plugin-template.sh

## Writes a new stage plugin package against the SDK: make plugin NAME=acme-tools [DIR=../acme-tools]
plugin:
	@test -n "$(NAME)" || { echo "usage: make plugin NAME=acme-tools [DIR=folder]" >&2; exit 2; }
	scripts/new-plugin.sh $(NAME) $(DIR)

## Runs the quick-start workflow over the bundled samples. Builds only the pipeline executable, and installs only
## what it needs to build.
quickstart: deps-build
	$(SWIFT) build --product pipeline
	scripts/quickstart.sh

## Prints the benchmark figures (release build).
bench: deps
	benchmarks/engine.sh
	-benchmarks/batch.sh
	benchmarks/transcode.sh
	benchmarks/startup.sh
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
	benchmarks/quality.sh
	benchmarks/stream.sh

## Regenerates the JSON Schema of workflows from the registered stages.
schema: build
	$(PIPELINE) schema > Workflows/workflow.schema.json

## Regenerates the stage reference (docs/stages.md) from the stages' declarations (a test fails while it is
## stale), then builds StageKit's DocC catalog (the stage author's guide) into .build/docs/StageKit; fails on a
## DocC warning.
docs: build
	$(PIPELINE) stages --markdown > docs/stages.md
	SWIFT=$(SWIFT) scripts/docs.sh

## Fails when a Swift file is not formatted as `make format` would write it, or when Sources breaks the size rules
## (scripts/sizes.sh: no file over 400 lines, no function over 60 unless its header says why it stays whole).
lint:
	scripts/sizes.sh
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift samples/plugin-hello/Sources samples/custom-pipeline/Sources \
	  sdk/Package.swift samples/plugin-hello/Package.swift samples/custom-pipeline/Package.swift

## Runs the concurrency-heavy tests under ThreadSanitizer (its own build folder, .build-tsan).
tsan: deps
	scripts/tsan.sh

format:
	$(SWIFT) format --in-place --recursive Sources Tests Package.swift samples/plugin-hello/Sources samples/custom-pipeline/Sources \
	  sdk/Package.swift samples/plugin-hello/Package.swift samples/custom-pipeline/Package.swift
