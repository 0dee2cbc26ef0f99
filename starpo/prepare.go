package starpo

import (
	"fmt"
	"math"
	"time"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/advantage"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/loss"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// Prepare turns the step's trajectories into the batch the updates train
// on. It normalises the scores per initial state, applies the rollout
// filter (StarPO-S's by default; an empty batch when it keeps nothing), and
// places the kept trajectories' rewards on their tokens; with
// a KL term it scores them under the reference policy, and with
// use_kl_in_reward subtracts the KL penalty from the rewards. all is every
// rank's trajectories in env-id order, local this rank's: the
// normalisation and the filter see all groups, and the batch holds this
// rank's kept ones.
func (t *Trainer) Prepare(all, local []rollout.Trajectory, rec *Recorder) (b *Batch, err error) {
	defer torchrt.Catch(&err, rec.during())
	if b, err = t.selectKept(all, local, rec); err != nil || t.keptNothing() {
		return b, err
	}
	a := t.Cfg.Algorithm
	if t.Ref != nil && (a.UseKLLoss || a.UseKLInReward) {
		t1 := time.Now()
		b.RefLogProbs = t.refLogProbs(b)
		rec.Time("ref", t1)
		if a.UseKLInReward {
			if err := t.klInReward(b, rec); err != nil {
				return nil, err
			}
		}
	}
	b.tokens = float64(b.Tokens() * max(1, a.PPOEpochs) * t.reuse())
	return b, t.Dist.Sum("token count", &b.tokens)
}

// selectKept normalises the scores, applies the rollout filter and lays
// out the kept trajectories of local with their rewards.
func (t *Trainer) selectKept(all, local []rollout.Trajectory, rec *Recorder) (*Batch, error) {
	a, groupSize := t.Cfg.Algorithm, t.Envs.Config().GroupSize
	scores, groups := make([]float64, len(all)), make([]int, len(all))
	for i, tr := range all {
		scores[i], groups[i] = tr.Score, tr.GroupID
		if a.UseTurnScores {
			scores[i] = sum(tr.TurnRewards)
		}
	}
	var err error
	// RAGEN normalises by initial-state group before the filter sees the
	// scores (docs/ragen.md#rewards), and not at all with turn scores.
	if !a.UseTurnScores {
		if scores, err = advantage.NormalizeScores(scores, groups, a.RewardNorm); err != nil {
			return nil, err
		}
	}
	keep, keptRatio, err := t.filterGroups(all, scores, rec)
	if err != nil {
		return nil, err
	}
	score := map[int]float64{} // env id → normalised score, of kept trajectories
	var keptScores []float64
	for _, r := range advantage.Rows(keep, groupSize) {
		score[all[r].EnvID] = scores[r]
		keptScores = append(keptScores, scores[r])
	}
	var kept []rollout.Trajectory
	for _, tr := range local {
		if _, ok := score[tr.EnvID]; ok {
			kept = append(kept, tr)
		}
	}
	b, err := t.placeRewards(kept, score)
	if err != nil {
		return nil, err
	}
	b.keptRatio = keptRatio
	rec.Metrics["train/rows"] = float64(b.Rows)
	rec.Metrics["critic/score/mean"] = advantage.Mean(keptScores)
	rec.Metrics["train/kept_trajectories"] = float64(len(keptScores))
	return b, nil
}

// placeRewards lays out the training rows of kept and places each row's
// rewards on its tokens: the trajectory's normalised score (score, by env
// id) on its last trained position, or with use_turn_scores each turn's
// reward on that turn's last.
func (t *Trainer) placeRewards(kept []rollout.Trajectory, score map[int]float64) (*Batch, error) {
	rows, owner, turn := batch.Sequences(kept)
	b := &Batch{Batch: batch.New(rows)}
	b.Rewards = make([][]float64, b.Rows)
	var err error
	for i := range rows {
		tr := kept[owner[i]]
		switch {
		case !t.Cfg.Algorithm.UseTurnScores:
			// A turn in its own window carries the episode's score too: with
			// γ = λ = 1 its advantages are then the same R − V as in the
			// whole episode.
			b.Rewards[i] = advantage.PlaceScore(b.Resp[i], score[tr.EnvID])
		case len(tr.PerTurn) > 0 && turn[i] >= len(tr.TurnRewards):
			err = fmt.Errorf("trajectory %d: turn %d has no reward (%d turn rewards)", tr.EnvID, turn[i]+1,
				len(tr.TurnRewards))
		case len(tr.PerTurn) > 0:
			// One turn of a windowed episode: the return from this turn on,
			// which is what the whole episode's GAE gives its tokens at γ = 1.
			rest := []float64{sum(tr.TurnRewards[turn[i]:])}
			b.Rewards[i], err = advantage.PlaceTurnRewards(b.Resp[i], b.TurnEnds[i], rest)
		default:
			b.Rewards[i], err = advantage.PlaceTurnRewards(b.Resp[i], b.TurnEnds[i], tr.TurnRewards)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}

// refLogProbs scores the batch's sampled tokens under the frozen reference
// policy, on the trained positions only.
func (t *Trainer) refLogProbs(b *Batch) [][]float64 {
	out := make([][]float64, 0, b.Rows)
	for _, mb := range batch.Split(0, b.Rows, max(1, t.Cfg.Algorithm.MicroBatch)) {
		func() {
			var s torchrt.Scope
			defer s.Drop()
			ids, attn, only := b.Micro(mb, t.Ref.Device, &s)
			sc, err := t.Ref.Score(ids, attn, model.ScoreOptions{ChunkRows: t.Cfg.Algorithm.LMHeadChunk, Only: only})
			torchrt.Check(err)
			defer sc.Drop()
			out = append(out, batch.ToRows(sc.LogProbs)...)
		}()
	}
	return out
}

// klInReward subtracts β·KL(π_old‖π_ref) per trained token from the
// rewards (verl's apply_kl_penalty with a fixed controller).
func (t *Trainer) klInReward(b *Batch, rec *Recorder) (err error) {
	defer torchrt.Catch(&err, "in-reward kl")
	var s torchrt.Scope
	defer s.Drop()
	a, all := t.Cfg.Algorithm, batch.Span{Lo: 0, Hi: b.Rows}
	old := s.Keep(batch.FloatRows(b.OldLogProbs, all, gotch.CPU))
	ref := s.Keep(batch.FloatRows(b.RefLogProbs, all, gotch.CPU))
	kl := batch.ToRows(s.Op(loss.KL(old, ref, a.KLPenalty)))
	var total, n float64
	for i := range b.Rewards {
		for j, m := range b.Resp[i] {
			if m == 0 {
				continue
			}
			b.Rewards[i][j] -= a.KLCoef * kl[i][j]
			total += kl[i][j]
			n++
		}
	}
	rec.Metrics["actor/reward_kl_penalty"] = total / math.Max(n, 1)
	rec.Metrics["actor/reward_kl_penalty_coeff"] = a.KLCoef
	return nil
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
