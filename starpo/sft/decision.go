package sft

import (
	"fmt"
	"math"

	"github.com/ragen-go/ragen/envs"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/batch"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
)

// Decisions measures how well a policy predicts an expert's choices, the
// part of a demonstration that depends on the state: the first token of
// the first action name in each demonstrated turn (for the built-in
// expert, the plan in its <think>; the answer repeats it). The template
// around it is learned long before the choice, so the supervised loss
// alone cannot tell a warm start that reads the board from one that does
// not; this does. Chance is the log of the number of actions (ln 4 = 1.386
// on Sokoban and FrozenLake).
//
// Chance is not the only baseline: when the prompt shows the episode's
// earlier turns, a policy can score by repeating its previous move, and an
// expert that often repeats itself (FrozenLake's optimal policy does in
// about 65% of its moves) rewards that without any reading of the board.
// Repeat is that policy's score, so a p near it says the model copies.
type Decisions struct {
	b      *batch.Batch
	only   [][]float64 // [Rows][Length−1]: 1 at decision positions
	N      int         // decisions counted
	Repeat float64     // mean p of "repeat the episode's previous decision, a uniform one first"
}

// DecisionReport is a policy's score on held-out decisions.
type DecisionReport struct {
	NLL    float64 // mean −log p(the expert's decision token)
	P      float64 // mean p(the expert's decision token)
	N      int     // decisions scored
	Repeat float64 // the repeat-the-previous-move baseline's p (Decisions.Repeat)
}

// NewDecisions finds the decision positions of demos. Environments
// without named actions (Countdown) contribute none; it is an error when
// no demonstration has one.
func NewDecisions(demos []rollout.Trajectory, tok *tokenizer.Tokenizer) (*Decisions, error) {
	starts := map[string]map[int]int{} // tag → first ids of its action names → action index
	actions := map[string]int{}        // tag → number of actions
	for _, d := range demos {
		if _, ok := starts[d.Tag]; ok {
			continue
		}
		env, err := envs.New(d.Tag)
		if err != nil {
			return nil, err
		}
		if _, err := env.Reset(d.Seed); err != nil {
			return nil, err
		}
		ids := map[int]int{}
		for i, a := range env.Actions() {
			for _, form := range []string{a, " " + a} {
				if e := tok.Encode(form); len(e) > 0 {
					ids[e[0]] = i
				}
			}
		}
		starts[d.Tag], actions[d.Tag] = ids, len(env.Actions())
	}
	rows, owner, _ := batch.Sequences(demos)
	b := batch.New(rows)
	dec := &Decisions{b: b, only: make([][]float64, b.Rows)}
	prev := make([]int, len(demos)) // each demonstration's last decision; rows come in turn order
	for i := range prev {
		prev[i] = -1
	}
	for r, s := range rows {
		dec.only[r] = make([]float64, b.Length-1)
		off := b.Length - len(s.IDs)
		tag := demos[owner[r]].Tag
		ids := starts[tag]
		found := false // a decision already counted in this turn
		for j := 1; j < len(s.IDs); j++ {
			if s.LossMask[j] == 0 {
				found = false
				continue
			}
			if a, ok := ids[s.IDs[j]]; ok && !found {
				dec.only[r][off+j-1] = 1
				dec.N++
				found = true
				switch p := prev[owner[r]]; {
				case p < 0:
					dec.Repeat += 1 / float64(actions[tag])
				case p == a:
					dec.Repeat++
				}
				prev[owner[r]] = a
			}
		}
	}
	if dec.N == 0 {
		return nil, fmt.Errorf("decisions: none of the %d demonstrations names an action", len(demos))
	}
	dec.Repeat /= float64(dec.N)
	return dec, nil
}

// Score evaluates actor on the decisions, micro rows at a time, without
// gradients.
func (d *Decisions) Score(actor *model.CausalLM, micro int) (rep DecisionReport, err error) {
	defer torchrt.Catch(&err, "scoring held-out decisions")
	for _, mb := range batch.Split(0, d.b.Rows, max(1, micro)) {
		lp, err := d.logProbs(actor, mb)
		if err != nil {
			return rep, err
		}
		for i, row := range lp {
			for j, v := range row {
				if d.only[mb.Lo+i][j] == 1 {
					rep.NLL -= v
					rep.P += math.Exp(v)
					rep.N++
				}
			}
		}
	}
	rep.NLL /= float64(rep.N)
	rep.P /= float64(rep.N)
	rep.Repeat = d.Repeat
	return rep, nil
}

// logProbs scores rows mb at their decision positions (0 elsewhere).
func (d *Decisions) logProbs(actor *model.CausalLM, mb batch.Span) ([][]float64, error) {
	var s torchrt.Scope
	defer s.Drop()
	ids, attn := d.b.Tensors(mb, actor.Device, &s)
	only := s.Keep(batch.FloatRows(d.only, mb, actor.Device))
	sc, err := actor.Score(ids, attn, model.ScoreOptions{Only: only})
	if err != nil {
		return nil, err
	}
	defer sc.Drop()
	return batch.ToRows(sc.LogProbs), nil
}
