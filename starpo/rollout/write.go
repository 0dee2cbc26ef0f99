package rollout

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/ragen-go/ragen/report"
)

// WriteTrajectories saves the conversations with their rewards, one
// report.Trajectory per line (the report reads them back).
func WriteTrajectories(path string, trajs []Trajectory) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, t := range trajs {
		rec := report.Trajectory{
			EnvID: t.EnvID, GroupID: t.GroupID, Tag: t.Tag, Seed: t.Seed, TurnRewards: t.TurnRewards,
			Penalty: t.Penalty, Shaping: t.Shaping, Score: t.Score, Success: t.Success, NumActions: t.NumActions,
		}
		for _, m := range t.Messages {
			rec.Messages = append(rec.Messages, report.Message{Role: m.Role, Content: m.Content})
		}
		if err := enc.Encode(rec); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
