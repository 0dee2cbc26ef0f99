package starpo

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"slices"

	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// Data parallelism (Trainer.Dist): every rank plays its shard of the
// groups, then sees every rank's trajectories (gathered, in env-id order)
// for the rollout metrics, the written trajectories and the StarPO-S
// filter, which therefore ranks all groups together. Each rank trains on
// its own kept groups: the advantages are whitened with global moments,
// each rank scales its loss by its share of the global micro-batches, and
// the gradients are summed across ranks before every optimiser step, so
// every rank takes the same step as one process with the whole batch would.

// gatherTrajectories gives every rank all ranks' trajectories, in env-id
// order (the single-process order). gob, not JSON: log-probs may be NaN.
func (t *Trainer) gatherTrajectories(local []rollout.Trajectory) ([]rollout.Trajectory, error) {
	if t.Dist == nil {
		return local, nil
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(local); err != nil {
		return nil, fmt.Errorf("encoding trajectories: %w", err)
	}
	parts, err := t.Dist.GatherBytes("trajectory gather", buf.Bytes())
	if err != nil {
		return nil, err
	}
	var all []rollout.Trajectory
	for r, p := range parts {
		var trajs []rollout.Trajectory
		if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&trajs); err != nil {
			return nil, fmt.Errorf("decoding rank %d's trajectories: %w", r, err)
		}
		all = append(all, trajs...)
	}
	slices.SortFunc(all, func(a, b rollout.Trajectory) int { return a.EnvID - b.EnvID })
	return all, nil
}

// sum adds v over the ranks in place (nothing to do alone).
func (t *Trainer) sum(what string) func(v ...*float64) error {
	return func(v ...*float64) error { return t.Dist.Sum(what, v...) }
}

// replicated are the tensors every rank must hold identically: the
// actor's and the critic's weights (their State: a LoRA run's frozen base
// is read from the same file on every rank, its adapters are not).
func (t *Trainer) replicated() []*ts.Tensor {
	var out []*ts.Tensor
	add := func(ps []model.Param) {
		for _, p := range ps {
			out = append(out, p.T)
		}
	}
	add(t.Actor.State())
	if t.Critic != nil {
		add(t.Critic.State())
	}
	return out
}

// SyncReplicas copies rank 0's weights to every rank (as DDP does at
// start: a randomly initialised value head, a checkpoint read at a
// different moment) and checks they agree.
func (t *Trainer) SyncReplicas() error {
	if t.Dist == nil {
		return nil
	}
	if err := t.Dist.Broadcast("broadcasting the weights", t.replicated()); err != nil {
		return err
	}
	_, err := t.CheckReplicas()
	return err
}

// CheckReplicas compares a hash of every rank's weights; a difference is
// an error (dist.ErrDiverged). It returns the hash.
func (t *Trainer) CheckReplicas() (uint64, error) {
	return t.Dist.CheckSame("actor and critic weights", t.replicated())
}

// allReduceGrads sums the gradients of opt's parameters across ranks.
func (t *Trainer) allReduceGrads(params []model.Param) error {
	if t.Dist == nil {
		return nil
	}
	tensors := make([]*ts.Tensor, len(params))
	for i, p := range params {
		tensors[i] = p.T
	}
	return t.Dist.AllReduceGrads(tensors)
}

// miniBatches is this rank's share of each of the step's mini-batches:
// the global batch of B rows (summed over ranks) makes
// ceil(B / MiniBatch) optimiser steps per epoch on every rank, and each
// rank cuts its own rows into that many contiguous pieces. Alone, the
// pieces are MiniBatch rows each, as before.
func (t *Trainer) miniBatches(localB, globalB int) []batch.Span {
	if t.Dist == nil {
		return batch.Split(0, localB, t.Cfg.Algorithm.PPOMiniBatch)
	}
	steps := len(batch.Split(0, globalB, t.Cfg.Algorithm.PPOMiniBatch))
	out := make([]batch.Span, steps)
	for k := range out {
		out[k] = batch.Span{Lo: k * localB / steps, Hi: (k + 1) * localB / steps}
	}
	return out
}
