package study

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ragen-go/ragen/report"
)

// WriteSummary reads every finished run and writes summary.json,
// summary.md and compare.html (each arm's seed-mean curves, all arms
// overlaid, and one page per environment).
func WriteSummary(out string, spec Spec, cells []Cell, took time.Duration) ([]Summary, error) {
	var results []Result
	for _, c := range cells {
		r, err := ReadResult(c, c.Dir(out))
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	sums := Summarise(spec, results)
	b, err := json.MarshalIndent(map[string]any{
		"study": spec.Name, "val_seeds": spec.ValSeeds, "seeds": spec.Seeds, "seconds": took.Seconds(), "arms": sums,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(out, "summary.md"), []byte(Markdown(sums)), 0o644); err != nil {
		return nil, err
	}
	return sums, writePages(out, spec, cells, "compare.html")
}

// writePages writes page (all arms on all environments) and
// compare-<env>.html, each arm drawn as the mean of its seeds.
func writePages(out string, spec Spec, cells []Cell, page string) error {
	byEnv := map[string][]*report.Run{}
	var all []*report.Run
	for _, env := range spec.Envs {
		for _, a := range spec.Arms {
			var seeds []*report.Run
			for _, c := range cells {
				if c.Env == env && c.Arm.Name == a.Name {
					r, err := report.LoadRun(c.Dir(out))
					if err != nil {
						return err
					}
					seeds = append(seeds, r)
				}
			}
			if len(seeds) == 0 {
				continue
			}
			m := report.MeanRun(fmt.Sprintf("%s · %s (mean of %d seeds)", env, a.ArmLabel(), len(seeds)), seeds)
			m.Dir = filepath.Join(out, "runs", env, a.Name)
			byEnv[env] = append(byEnv[env], m)
			all = append(all, m)
		}
	}
	title := fmt.Sprintf("study %s: %d arms on %d environments", spec.Name, len(spec.Arms), len(spec.Envs))
	if err := report.CompareRuns(title, all, filepath.Join(out, page)); err != nil {
		return err
	}
	for env, runs := range byEnv {
		title := fmt.Sprintf("study %s on %s", spec.Name, env)
		if err := report.CompareRuns(title, runs, filepath.Join(out, "compare-"+env+".html")); err != nil {
			return err
		}
	}
	return nil
}
