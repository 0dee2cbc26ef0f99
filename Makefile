# ragen-go. Every target runs deps first, so the README's commands work on a
# fresh machine.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 1

.PHONY: deps build test train bench clean

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -buildvcs=auto -o bin/ragen ./cmd/ragen

test: deps
	$(GO) test -count=1 -timeout 60m ./...

bench: deps
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...

clean:
	rm -rf bin third_party/gotch third_party/gotch.tmp

# The StarPO trainer (`ragen train`, the trainer issue) is not in this
# build yet; say so instead of failing obscurely.
train: build
	@echo "make train: the StarPO trainer (ragen train) is not implemented yet; bin/ragen has: env, generate, tokenize, version" >&2
	@exit 1
