package sft

import (
	"runtime"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/modeltest"
	"github.com/ragen-go/ragen/starpo/rollout"
	"github.com/ragen-go/ragen/tokenizer"
	"github.com/ragen-go/ragen/tokenizer/tokenizertest"
)

// tinyPolicy loads a tiny random policy, trainable, on the real
// vocabulary, with the rollout configuration of groups groups of size
// SimpleSokoban environments and turns turns.
func tinyPolicy(t *testing.T, groups, size, turns int) (*model.CausalLM, *tokenizer.Tokenizer, rollout.Config) {
	t.Helper()
	runtime.LockOSThread()
	tok, err := tokenizer.Load(tokenizertest.Path(t))
	if err != nil {
		t.Fatal(err)
	}
	actor := modeltest.LoadTinyPolicy(t, tok.VocabSize(), 2)
	if err := model.SetTrainable(actor.Params(), true); err != nil {
		t.Fatal(err)
	}
	rc := rollout.DefaultConfig()
	rc.EnvGroups, rc.GroupSize, rc.NGroups, rc.MaxTurn = groups, size, []int{groups}, turns
	return actor, tok, rc
}
