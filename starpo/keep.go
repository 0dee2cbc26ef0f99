package starpo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rs/zerolog/log"

	"github.com/ragen-go/ragen/internal/durable"
	"github.com/ragen-go/ragen/model"
)

// A run's disk stays bounded: after each checkpoint the older ones beyond
// keep_checkpoints (and the multiples of keep_every) are removed, and a
// checkpoint is not started on a disk without room for it.

// freeSpace is durable.Free; tests replace it to fill the disk.
var freeSpace = durable.Free

// checkpointBytes estimates a checkpoint of the trainer: every weight it
// keeps (the models' State) in fp32 and the two AdamW moments of every trained one, plus a tenth for
// headers, trainer.json and the manifest (a generous bound: the headers
// of a 0.5B model are a few hundred kB).
func (t *Trainer) checkpointBytes() uint64 {
	n := model.CountParams(t.Actor.State()) + 2*model.CountParams(t.ActorOpt.Params())
	if t.Critic != nil {
		n += model.CountParams(t.Critic.State()) + 2*model.CountParams(t.CriticOpt.Params())
	}
	return uint64(float64(4*n) * 1.1)
}

// checkSpace refuses to start a checkpoint of need bytes under root when
// the disk has less room: a full disk would stop the run in the middle of
// writing it. A file system that cannot say is trusted (a warning): the
// check protects the run and must not be what stops it.
func checkSpace(root string, need uint64) error {
	free, err := freeSpace(root)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil
	case err != nil:
		log.Warn().Err(err).Str("folder", root).Msg("cannot measure the free disk space; saving the checkpoint unchecked")
		return nil
	case free < need:
		return fmt.Errorf("%s: %s free, a checkpoint needs about %s; free space, or lower keep_checkpoints and --resume",
			root, gigabytes(free), gigabytes(need))
	}
	return nil
}

// gigabytes writes a byte count in decimal GB, to one digit (MB below 0.1 GB).
func gigabytes(b uint64) string {
	if b < 100e6 {
		return fmt.Sprintf("%.1f MB", float64(b)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(b)/1e9)
}

// pruneCheckpoints removes the checkpoint folders under root that the keep
// rule lets go once step's checkpoint is there: of the folders of step ≤
// step it keeps the newest keep (0: all) and those of steps that are
// multiples of every (0: none), and never step's own. A folder of a later
// step, left by an abandoned timeline that --resume went back from, stays
// until the run reaches its step and replaces it. Leftover .partial
// folders of interrupted saves go too. A folder is renamed to .partial
// before it is removed, so a crash midway never leaves a torn step-N.
func pruneCheckpoints(root string, step, keep, every int) error {
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var steps []int
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if strings.HasSuffix(e.Name(), partialSuffix) { // no save is under way while the run prunes
			if err := os.RemoveAll(filepath.Join(root, e.Name())); err != nil {
				return fmt.Errorf("removing %s: %w", filepath.Join(root, e.Name()), err)
			}
		} else if n, ok := folderStep(e.Name()); ok && n <= step {
			steps = append(steps, n)
		}
	}
	slices.Sort(steps)
	slices.Reverse(steps) // newest first
	for i, n := range steps {
		if n == step || keep == 0 || i < keep || every > 0 && n%every == 0 {
			continue
		}
		dir := filepath.Join(root, checkpointName(n))
		if err := os.Rename(dir, dir+partialSuffix); err != nil {
			return fmt.Errorf("removing checkpoint %s: %w", dir, err)
		}
		if err := os.RemoveAll(dir + partialSuffix); err != nil {
			return fmt.Errorf("removing checkpoint %s: %w", dir, err)
		}
		log.Debug().Str("checkpoint", dir).Msg("removed (keep_checkpoints, keep_every)")
	}
	return durable.SyncDir(root)
}
