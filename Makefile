# ragen-go. Every target runs deps first, so the README's commands work on a
# fresh machine.
SHELL := /bin/bash
GO ?= go
export CGO_ENABLED := 1

.PHONY: deps build test test-torch fuzz kill-soak parity train train-long bench bench-go clean

deps:
	@scripts/deps.sh

build: deps
	$(GO) build -buildvcs=auto -o bin/ragen ./cmd/ragen

test: deps
	$(GO) test -count=1 -timeout 60m ./...

# make fuzz FUZZTIME=10m: each Fuzz* target of the module for FUZZTIME, one
# after the other (scripts/fuzz.sh; a table of execs and results at the
# end). make test already runs every target's seed corpus. make kill-soak
# KILLS=20: kill -9 a tiny training run KILLS times and check that every
# resume is clean and the record whole (scripts/kill-soak.sh).
# docs/reliability.md has the figures.
FUZZTIME ?= 30s
fuzz: deps
	@scripts/fuzz.sh $(FUZZTIME)

KILLS ?= 20
kill-soak: build
	@scripts/kill-soak.sh $(KILLS)

# make test-torch TORCH=2.1.2: the whole suite against PyPI's torch of that
# version (a virtualenv in .cache/torch-VERSION, put first on PATH, so make
# deps prepares gotch for its libtorch the way it does for a user's pip
# install). third_party/gotch stays prepared for it until the next make with
# another libtorch.
TORCH ?= 2.1.2
test-torch:
	@bin=$$(scripts/torch-venv.sh $(TORCH)) && echo "make test with $$bin/python's torch" && PATH="$$bin:$$PATH" $(MAKE) --no-print-directory test

# make parity: ragen against its peers, in a pinned virtualenv
# (scripts/parity-venv.sh, .cache/parity): the RL math against verl's
# core_algos and the tokenizer against HuggingFace tokenizers (Go tests in
# parity/), the model, generation, export and chat template against
# transformers (scripts/parity, pytest), and the benchmark's transformers
# baseline (RAGEN_BENCH_IMPL=transformers) against our PPO updates (bench/).
parity: build
	@py=$$(scripts/parity-venv.sh) && \
	RAGEN_PARITY_PYTHON=$$py $(GO) test -count=1 -v -timeout 30m ./parity/ && \
	RAGEN_PARITY_PYTHON=$$py $(GO) test -count=1 -v -run 'TestBaseline.*/transformers' ./bench/ && \
	RAGEN_BIN=bin/ragen $$py -m pytest -q scripts/parity

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

# make train: the built-in job: validate SmolLM2-135M-Instruct (installed by
# make deps), train it with StarPO-S, validate it again on the same seeds and
# print the change (ragen quickstart, configs/quickstart.yaml;
# runs/quickstart). make train MODEL=DIR|FILE.gguf|smollm2
# [ENV=sokoban|frozenlake|bandit|countdown|smoke] runs a preset instead.
ENV ?= sokoban
train: build
	@if [ -z "$(MODEL)" ]; then \
		echo bin/ragen quickstart; bin/ragen quickstart; \
	else \
		echo bin/ragen train --config configs/$(ENV).yaml --model "$(MODEL)"; \
		bin/ragen train --config configs/$(ENV).yaml --model "$(MODEL)"; \
	fi

# make train-long: the long real-model job (1 h 32 min on 2 cores):
# SmolLM2-135M-Instruct on SimpleSokoban with <think>, warm-started on
# solver demonstrations, then 16 StarPO-S steps, validated before and after
# each stage (configs/smollm2-sokoban.yaml; runs/smollm2-sokoban).
train-long: build
	bin/ragen quickstart --config configs/smollm2-sokoban.yaml --model $(or $(MODEL),smollm2)
