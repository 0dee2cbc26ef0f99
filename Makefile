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

# make train: the built-in job (no download): create a small Qwen2 model on
# the real Qwen tokenizer, warm-start it on solver demonstrations, train it
# with StarPO-S, and print validation success before and after each stage
# (ragen quickstart, configs/quickstart.yaml; runs/quickstart).
# make train MODEL=DIR [ENV=sokoban|frozenlake|bandit|countdown|smoke]
# trains a HuggingFace checkpoint with StarPO-S instead.
ENV ?= sokoban
train: build
	@if [ -z "$(MODEL)" ]; then \
		echo bin/ragen quickstart; bin/ragen quickstart; \
	else \
		echo bin/ragen train --config configs/$(ENV).yaml --model "$(MODEL)"; \
		bin/ragen train --config configs/$(ENV).yaml --model "$(MODEL)"; \
	fi
