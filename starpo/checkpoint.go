package starpo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rs/zerolog/log"
	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/internal/buildinfo"
	"github.com/ragen-go/ragen/internal/durable"
	"github.com/ragen-go/ragen/internal/manifest"
	"github.com/ragen-go/ragen/internal/torchrt"
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/model/safetensors"
	"github.com/ragen-go/ragen/starpo/config"
)

// A checkpoint is a folder checkpoints/step-NNNNNN holding actor.safetensors,
// critic.safetensors (the models' State: every weight, or with LoRA the
// adapters and the critic's value head), their optimiser states, trainer.json and
// manifest.json (every file's SHA-256, the step, the config's hash and the
// ragen version). It is written as step-NNNNNN.partial, every file and the
// folder synced, and renamed into place; the file "latest" is replaced
// (also by rename) only then. So a crash or a power loss at any moment
// leaves the previous checkpoint intact and never a half-written one, and
// a checkpoint that "latest" names is whole on disk.

// trainerState is trainer.json.
type trainerState struct {
	Step int `json:"step"` // steps completed
}

const (
	latestFile    = "latest"
	partialSuffix = ".partial"
)

// SaveCheckpoint writes the trainer's state after `step` completed steps
// under root (a run's checkpoints folder) and returns the folder. A
// checkpoint of the same step already there is replaced.
func (t *Trainer) SaveCheckpoint(root string, step int) (string, error) {
	name := checkpointName(step)
	final := filepath.Join(root, name)
	tmp := final + partialSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", fmt.Errorf("creating checkpoint folder: %w", err)
	}
	if err := t.writeState(tmp, step); err != nil {
		return "", err
	}
	if err := durable.SyncFolder(tmp); err != nil {
		return "", err
	}
	if err := os.RemoveAll(final); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("moving checkpoint into place: %w", err)
	}
	if err := durable.SyncDir(root); err != nil {
		return "", err
	}
	return final, durable.WriteFile(filepath.Join(root, latestFile), []byte(name+"\n"), 0o644)
}

// writeState writes the checkpoint's files into dir, the manifest last.
func (t *Trainer) writeState(dir string, step int) error {
	if err := saveParams(filepath.Join(dir, "actor.safetensors"), t.Actor.State()); err != nil {
		return err
	}
	if err := t.ActorOpt.Save(filepath.Join(dir, "actor_optim.safetensors")); err != nil {
		return err
	}
	if t.Critic != nil { // GRPO trains no critic
		if err := saveParams(filepath.Join(dir, "critic.safetensors"), t.Critic.State()); err != nil {
			return err
		}
		if err := t.CriticOpt.Save(filepath.Join(dir, "critic_optim.safetensors")); err != nil {
			return err
		}
	}
	data, _ := json.MarshalIndent(trainerState{Step: step}, "", "  ")
	if err := durable.WriteFile(filepath.Join(dir, "trainer.json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	return writeManifest(dir, t.Cfg, step)
}

// writeManifest writes dir's manifest.json for a folder of the run cfg
// after step steps.
func writeManifest(dir string, cfg config.Config, step int) error {
	h, err := cfg.Hash()
	if err != nil {
		return err
	}
	return manifest.Write(dir, manifest.Manifest{Step: step, Config: h, Version: buildinfo.Version()})
}

func checkpointName(step int) string { return fmt.Sprintf("step-%06d", step) }

// VerifyCheckpoint checks the checkpoint folder dir against its
// manifest.json (manifest.Verify: every file's SHA-256, none missing or
// added) and the manifest's step against the folder's name. A checkpoint
// without a manifest (saved by a ragen before manifests) passes with a
// warning, and so does one saved under another config than cfg: a resumed
// run may change steps or val_every.
func VerifyCheckpoint(dir string, cfg config.Config) error {
	m, err := manifest.Verify(dir)
	if err != nil {
		return err
	}
	if m == nil {
		log.Warn().Str("checkpoint", dir).Msg("the checkpoint has no manifest.json (saved by an older ragen): " +
			"its files cannot be checked; loading them as they are")
		return nil
	}
	if n, ok := folderStep(filepath.Base(dir)); !ok || n != m.Step {
		return fmt.Errorf("%s: step %d does not match its folder %s; %s",
			filepath.Join(dir, manifest.Name), m.Step, filepath.Base(dir), manifest.Hint)
	}
	if h, err := cfg.Hash(); err == nil && h != m.Config {
		log.Warn().Str("checkpoint", dir).Str("saved_by", m.Version).Msg("this run's config differs from the one " +
			"the checkpoint was saved with (fine for steps or val_every; check the rest in config.yaml)")
	}
	return nil
}

// LatestCheckpoint is the folder "latest" names under root, or "" when
// there is none.
func LatestCheckpoint(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, latestFile))
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	name := strings.TrimSpace(string(b))
	if _, ok := folderStep(name); !ok {
		return "", fmt.Errorf("%s names %q, not a checkpoint folder step-N", filepath.Join(root, latestFile), name)
	}
	dir := filepath.Join(root, name)
	if _, err := os.Stat(filepath.Join(dir, "trainer.json")); err != nil {
		return "", fmt.Errorf("checkpoint %s named by %s is incomplete: %w", dir, filepath.Join(root, latestFile), err)
	}
	return dir, nil
}

// LoadCheckpoint restores weights and optimiser states from dir and returns
// the number of steps completed.
func (t *Trainer) LoadCheckpoint(dir string) (int, error) {
	st, err := readTrainerState(dir)
	if err != nil {
		return 0, err
	}
	if err := loadParams(filepath.Join(dir, "actor.safetensors"), t.Actor.State()); err != nil {
		return 0, err
	}
	if err := t.ActorOpt.Load(filepath.Join(dir, "actor_optim.safetensors")); err != nil {
		return 0, err
	}
	_, err = os.Stat(filepath.Join(dir, "critic.safetensors"))
	switch hasCritic := err == nil; {
	case hasCritic && t.Critic == nil:
		return 0, fmt.Errorf("checkpoint %s has a critic, but this run trains none (algorithm.adv_estimator is not "+
			"gae): resume with the config it was saved with", dir)
	case !hasCritic && t.Critic != nil:
		return 0, fmt.Errorf("checkpoint %s has no critic (a GRPO run), but this run trains one "+
			"(algorithm.adv_estimator gae): resume with the config it was saved with", dir)
	case hasCritic:
		if err := loadParams(filepath.Join(dir, "critic.safetensors"), t.Critic.State()); err != nil {
			return 0, err
		}
		if err := t.CriticOpt.Load(filepath.Join(dir, "critic_optim.safetensors")); err != nil {
			return 0, err
		}
	}
	return st.Step, nil
}

// readTrainerState reads dir/trainer.json, which must give the step its
// folder is named after (step-N): a checkpoint resumes at that step, so a
// trainer.json without one, or another, is refused rather than trusted.
func readTrainerState(dir string) (trainerState, error) {
	path := filepath.Join(dir, "trainer.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return trainerState{}, fmt.Errorf("reading checkpoint: %w", err)
	}
	st, err := parseTrainerState(b)
	if err != nil {
		return trainerState{}, fmt.Errorf("%s: %w", path, err)
	}
	n, ok := folderStep(filepath.Base(dir))
	switch {
	case !ok:
		return trainerState{}, fmt.Errorf("%s: its folder %s is not named step-N", path, filepath.Base(dir))
	case n != st.Step:
		return trainerState{}, fmt.Errorf("%s: step %d does not match its folder %s", path, st.Step, filepath.Base(dir))
	}
	return st, nil
}

// parseTrainerState parses trainer.json strictly: one object with the step
// key, a count ≥ 0, and no other key.
func parseTrainerState(b []byte) (trainerState, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw struct {
		Step *int `json:"step"`
	}
	if err := dec.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return trainerState{}, errors.New("the file is empty; it must hold {\"step\": N}")
		case errors.As(err, &te) && te.Field == "step":
			return trainerState{}, fmt.Errorf("step is a JSON %s, not a count of steps", te.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			key := strings.TrimPrefix(err.Error(), "json: unknown field ")
			return trainerState{}, fmt.Errorf("unknown key %s; trainer.json holds only step", key)
		}
		return trainerState{}, fmt.Errorf("not a trainer state {\"step\": N}: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return trainerState{}, errors.New("data after the JSON object")
	}
	switch {
	case raw.Step == nil:
		return trainerState{}, errors.New("the step key is missing; it must hold {\"step\": N}")
	case *raw.Step < 0:
		return trainerState{}, fmt.Errorf("step %d is negative", *raw.Step)
	}
	return trainerState{Step: *raw.Step}, nil
}

// folderStep is the N of a checkpoint folder's name step-N.
func folderStep(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, "step-")
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" || len(digits) > 12 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// saveParams writes parameters in fp32 under their HuggingFace names.
func saveParams(path string, params []model.Param) error {
	tensors := make([]safetensors.Tensor, 0, len(params))
	for _, p := range params {
		p := p
		tensors = append(tensors, safetensors.Tensor{
			Name: p.Name, DType: safetensors.F32, Shape: torchrt.Size(p.T),
			Source: func() ([]byte, error) { return torchrt.TensorBytes(p.T, gotch.Float) },
		})
	}
	return safetensors.Write(path, tensors, map[string]string{"format": "pt"})
}

// loadParams copies a saveParams file into the parameters in place,
// checking that names and shapes match exactly.
func loadParams(path string, params []model.Param) (err error) {
	f, err := safetensors.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := loraMismatch(path, f.Names(), params); err != nil {
		return err
	}
	if n := len(f.Names()); n != len(params) {
		return fmt.Errorf("%s holds %d tensors, the model has %d", path, n, len(params))
	}
	return torchrt.NoGrad(func() (err error) {
		defer torchrt.Catch(&err, "loading "+path)
		for _, p := range params {
			info, err := f.Info(p.Name)
			if err != nil {
				return err
			}
			data, err := f.Bytes(p.Name)
			if err != nil {
				return err
			}
			c, err := torchrt.TensorFromBytes(data, info.Shape, gotch.Float)
			if err != nil {
				return fmt.Errorf("%s: tensor %s: %w", path, p.Name, err)
			}
			if want := torchrt.Size(p.T); fmt.Sprint(want) != fmt.Sprint(info.Shape) {
				c.MustDrop()
				return fmt.Errorf("%s: tensor %s has shape %v, the model %v", path, p.Name, info.Shape, want)
			}
			torchrt.CopyInto(p.T, c)
			c.MustDrop()
		}
		return nil
	})
}
