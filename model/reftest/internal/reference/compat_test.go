package reference_test

import (
	"encoding/json"
	"testing"

	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/reftest/internal/reference"
)

// TestModelConfigAgrees checks that package model reads RandomCheckpoint's
// config.json, and that a model.Config converts to a reference.Config
// through JSON with the same meaning.
func TestModelConfigAgrees(t *testing.T) {
	dir := t.TempDir()
	if err := reference.RandomCheckpoint(dir, reference.TinyConfig(), 1, true, 0); err != nil {
		t.Fatal(err)
	}
	mc, err := model.LoadConfig(dir)
	if err != nil {
		t.Fatalf("package model rejects the random checkpoint's config.json: %v", err)
	}
	raw, err := json.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := reference.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := reference.LoadConfig(dir)
	if rc.HiddenSize != want.HiddenSize || rc.NumKeyValueHeads != want.NumKeyValueHeads || rc.RopeTheta != want.RopeTheta ||
		rc.RMSNormEps != want.RMSNormEps || rc.TieWordEmbeddings != want.TieWordEmbeddings || !mc.TieWordEmbeddings ||
		mc.HeadDimension() != rc.HeadDimension() || mc.IntermediateSize != rc.IntermediateSize || mc.VocabSize != rc.VocabSize {
		t.Errorf("model.Config %+v became %+v, want %+v", mc, rc, want)
	}
}
