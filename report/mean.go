package report

import (
	"bytes"
	"errors"
	"sort"
)

// MeanRun is a run whose curves are the means of runs' (the seeds of one
// recipe) at each step: each metric is averaged over the runs that logged it
// at that step. It carries no trajectories and the first run's config.
func MeanRun(name string, runs []*Run) *Run {
	out := &Run{Name: name}
	if len(runs) > 0 {
		out.Dir, out.Config, out.Info = runs[0].Dir, runs[0].Config, runs[0].Info
	}
	var train, val [][]Row
	for _, r := range runs {
		train, val = append(train, r.Metrics.Train), append(val, r.Metrics.Val)
	}
	out.Metrics = Metrics{Train: meanRows(train), Val: meanRows(val)}
	return out
}

// meanRows averages rows of the same step across the lists. Each value is
// divided by its count before it is added, so that two values near the
// float64 limit average to a finite one (a sum would overflow to +Inf,
// which the page's JSON cannot hold).
func meanRows(lists [][]Row) []Row {
	counts := map[float64]map[string]float64{}
	for _, rows := range lists {
		for _, row := range rows {
			st := row["step"]
			if counts[st] == nil {
				counts[st] = map[string]float64{}
			}
			for k := range row {
				counts[st][k]++
			}
		}
	}
	means := make(map[float64]Row, len(counts))
	for _, rows := range lists {
		for _, row := range rows {
			st := row["step"]
			if means[st] == nil {
				means[st] = Row{}
			}
			for k, v := range row {
				means[st][k] += v / counts[st][k]
			}
		}
	}
	steps := make([]float64, 0, len(means))
	for st := range means {
		steps = append(steps, st)
	}
	sort.Float64s(steps)
	out := make([]Row, len(steps))
	for i, st := range steps {
		out[i] = means[st]
		out[i]["step"] = st // exactly, not a sum of st/n
	}
	return out
}

// CompareRuns writes one page overlaying the curves of runs already loaded
// (for example MeanRun's), titled title.
func CompareRuns(title string, runs []*Run, out string) error {
	if len(runs) == 0 {
		return errors.New("compare: no runs given")
	}
	var b bytes.Buffer
	if err := renderPage(&b, title, runs, nil, &texts{}); err != nil {
		return err
	}
	return writeAtomic(out, b.Bytes())
}
