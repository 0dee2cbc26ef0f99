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

# make train MODEL=DIR [ENV=sokoban|frozenlake|bandit|countdown|smoke]
# trains a HuggingFace checkpoint with StarPO-S. The built-in default small
# model (no MODEL given) is not in this build yet: say so plainly.
ENV ?= sokoban
train: build
	@if [ -z "$(MODEL)" ]; then \
		echo "make train: give MODEL=DIR (a HuggingFace Qwen2 checkpoint folder); the built-in small default model is not in this build yet" >&2; exit 1; fi
	bin/ragen train --config configs/$(ENV).yaml --model "$(MODEL)"
