# ragen-go. Every target runs deps first, so the README's commands work on a
# fresh machine.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 1

.PHONY: deps build test train bench bench-go clean

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -buildvcs=auto -o bin/ragen ./cmd/ragen

test: deps
	$(GO) test -count=1 -timeout 60m ./...

# make bench: `ragen bench` on the 50M preset (matmul peak, prefill, decode,
# a Sokoban rollout, the PPO updates), beside the PyTorch baseline when
# Debian's python3-torch is installed (apt-get install -y
# --no-install-recommends python3-torch); BENCH_FLAGS adds flags, e.g.
# BENCH_FLAGS='--soak 10m' or '--dtype bf16'. make bench-go runs the Go
# micro-benchmarks (go test -bench).
BENCH_FLAGS ?=
bench: build
	@vs=; if /usr/bin/python3 -c 'import torch' 2>/dev/null; then vs=--vs-torch; \
	else echo "make bench: no python3-torch, so no PyTorch baseline (apt-get install -y --no-install-recommends python3-torch)"; fi; \
	echo bin/ragen bench --preset 50m $$vs $(BENCH_FLAGS); bin/ragen bench --preset 50m $$vs $(BENCH_FLAGS)

bench-go: deps
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
