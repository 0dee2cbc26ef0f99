// Package bench measures what ragen's training loop spends its time on:
// the device's matmul peak, prefill and cached decode throughput, a
// multi-turn Sokoban rollout with the environments in the loop, and the
// actor's and critic's PPO updates, each as tokens/s, achieved FLOP/s and
// MFU against the measured peak, with peak memory, and a long decode loop
// that checks resident memory stays flat. With a Torch baseline
// (scripts/bench_torch.py: the same model written HuggingFace-style in
// plain PyTorch, on the same libtorch) each measurement runs on both
// sides, interleaved, on the same inputs. `ragen bench` is its command.
package bench
