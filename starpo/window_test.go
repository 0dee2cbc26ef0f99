package starpo

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/rollout"
)

// withWindow rebuilds tr's environments with agent.max_context_window k.
func withWindow(t *testing.T, tr *Trainer, k int) {
	t.Helper()
	rc := tr.Envs.Config()
	rc.MaxContextWindow = k
	mgr, err := rollout.NewManager(rc, tr.Tok)
	if err != nil {
		t.Fatal(err)
	}
	tr.Envs = mgr
}

// playOnce rolls out tr's actor on its environments from seed base.
func playOnce(t *testing.T, tr *Trainer, base int64) []rollout.Trajectory {
	t.Helper()
	if err := tr.Envs.Reset(base); err != nil {
		t.Fatal(err)
	}
	gen, release := NewGenerator(tr.Actor, tr.Tok, genOptions(tr.Cfg, tr.Cfg.Rollout.Temperature))
	defer release()
	trajs, _, err := tr.Envs.Run(gen)
	if err != nil {
		t.Fatal(err)
	}
	return trajs
}

// Every training row, a whole episode or one turn in its window, is the
// exact context its ids were sampled in: the actor scores the sampled ids
// of a row with the log-probabilities the sampler drew them with, so the
// first PPO ratio is 1. With a window each turn is a row of its own whose
// loss mask covers that turn's sampled ids only.
func TestTrainingRowsAreOnPolicy(t *testing.T) {
	for _, window := range []int{-1, 1, 2} {
		tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 2, 3)
		withWindow(t, tr, window)
		trajs := playOnce(t, tr, tr.Envs.Config().TrainSeed(0))
		rows, owner, turn := batch.Sequences(trajs)
		wantRows := 0
		for _, tj := range trajs {
			if window > 0 {
				wantRows += len(tj.PerTurn)
			} else {
				wantRows++
			}
		}
		if len(rows) != wantRows || len(owner) != wantRows || len(turn) != wantRows {
			t.Fatalf("window %d: %d rows, want %d", window, len(rows), wantRows)
		}
		b := batch.New(rows)
		var s torchrt.Scope
		ids, attn := b.Tensors(batch.Span{Lo: 0, Hi: b.Rows}, tr.Actor.Device, &s)
		sc, err := tr.Actor.Score(ids, attn, model.ScoreOptions{})
		s.Drop()
		if err != nil {
			t.Fatal(err)
		}
		lp := batch.ToRows(sc.LogProbs)
		sc.Drop()
		worst := 0.0
		for r := range rows {
			trained := 0
			for j, m := range b.Resp[r] {
				if m == 0 {
					continue
				}
				trained++
				worst = max(worst, math.Abs(lp[r][j]-b.OldLogProbs[r][j]))
			}
			want := trajs[owner[r]].ResponseTokens
			if window > 0 {
				want = len(trajs[owner[r]].PerTurn[turn[r]].TurnEnds) // one turn per row
				if want != 1 {
					t.Fatalf("window %d row %d: %d turns trained, want 1", window, r, want)
				}
				want = 0
				for _, m := range rows[r].LossMask {
					want += int(m)
				}
			}
			if trained == 0 || trained != want {
				t.Fatalf("window %d row %d: %d trained positions, want %d", window, r, trained, want)
			}
		}
		if worst > 1e-4 {
			t.Fatalf("window %d: the actor scores sampled ids %.2g away from their sampling log-probs", window, worst)
		}
		t.Logf("window %d: %d trajectories, %d rows, max |Δ log p| %.2g", window, len(trajs), len(rows), worst)
	}
}

// A StarPO-S step with a context window trains one row per turn: all of
// them (keep everything), both models change, the metrics stay finite.
func TestTrainerStepWindowed(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 2, 2, 3)
	withWindow(t, tr, 1)
	tr.Cfg.Algorithm.FilterRatio = 1
	turns := 0
	tr.OnRollout = func(_ int, trajs []rollout.Trajectory) error {
		for _, tj := range trajs {
			if len(tj.IDs) != 0 {
				t.Fatalf("trajectory %d has a whole-episode sequence under a window", tj.EnvID)
			}
			turns += len(tj.PerTurn)
		}
		return nil
	}
	before := model.Float32s(tr.Actor.Norm.Weight)
	cBefore := model.Float32s(tr.Critic.Score.Weight)
	met, err := tr.Step(0)
	if err != nil {
		t.Fatal(err)
	}
	if met["train/rows"] != float64(turns) || met["train/kept_trajectories"] != 4 || turns <= 4 {
		t.Fatalf("%v rows for %d turns of %v trajectories", met["train/rows"], turns, met["train/kept_trajectories"])
	}
	for _, k := range []string{"actor/pg_loss", "actor/grad_norm", "critic/vf_loss", "critic/grad_norm"} {
		if v, ok := met[k]; !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("metric %s = %v (present %v)", k, v, ok)
		}
	}
	same := func(a, b []float32) bool {
		for i := range a {
			if a[i] != b[i] {
				return false
			}
		}
		return true
	}
	if same(before, model.Float32s(tr.Actor.Norm.Weight)) || same(cBefore, model.Float32s(tr.Critic.Score.Weight)) {
		t.Fatal("a windowed step left the actor or the critic unchanged")
	}
}

// Turn scores under a window: each turn's row carries the return from that
// turn on, on its last sampled token.
func TestWindowedTurnScores(t *testing.T) {
	tr := newTinyTrainer(t, filepath.Join(t.TempDir(), "tiny"), 1, 2, 3)
	withWindow(t, tr, 1)
	tr.Cfg.Algorithm.UseTurnScores, tr.Cfg.Algorithm.FilterRatio = true, 1
	trajs := playOnce(t, tr, 0)
	trajs[0].TurnRewards = []float64{1, 2, 4}[:len(trajs[0].TurnRewards)]
	b, err := tr.selectKept(trajs, trajs, NewRecorder(0))
	if err != nil {
		t.Fatal(err)
	}
	for k := range trajs[0].PerTurn {
		want := sum(trajs[0].TurnRewards[k:])
		got, at := 0.0, -1
		for j, r := range b.Rewards[k] {
			if r != 0 {
				got, at = r, j
			}
		}
		if got != want || at != b.TurnEnds[k][0] {
			t.Fatalf("turn %d: reward %v at %d, want %v at %d", k+1, got, at, want, b.TurnEnds[k][0])
		}
	}
}
