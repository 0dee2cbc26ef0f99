package study

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzState: no study.json makes its reader panic, and a state it accepts
// has a bounded grid whose run folders all lie inside the study folder
// (ragen report --run on a study reads them).
func FuzzState(f *testing.F) {
	for _, file := range []string{"freshness.yaml", "study.yaml"} {
		spec, err := LoadSpec(filepath.Join("../../configs/study", file))
		if err != nil {
			f.Fatal(err)
		}
		out := filepath.Join(f.TempDir(), "study")
		if err := Claim(out, spec, []string{"steps=3"}); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "study.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	const head = `{"spec": {"Name": "x", "Base": "b.yaml", "TrainGroups": 1, "ValSeeds": 1, `
	f.Add([]byte(head + `"Seeds": 1, "Envs": ["../../etc"], "Arms": [{"Name": "a"}]}, "base_config": "", "sets": []}`))
	f.Add([]byte(head + `"Seeds": 1000000000, "Envs": ["Bandit"], "Arms": [{"Name": "a"}]}, ` +
		`"base_config": "", "sets": []}`))
	f.Add([]byte(head + `"Seeds": 1, "Envs": ["Bandit"], "Arms": [{"Name": ".."}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := readState("study.json", data)
		if err != nil {
			return
		}
		cells := st.Spec.Cells()
		if len(cells) > maxCells {
			t.Fatalf("accepted a grid of %d runs", len(cells))
		}
		root := filepath.Join("studies", "x")
		for _, c := range cells {
			rel, err := filepath.Rel(root, c.Dir(root))
			if err != nil || !filepath.IsLocal(rel) || !strings.HasPrefix(rel, "runs"+string(filepath.Separator)) {
				t.Fatalf("cell %v's folder %s is not under %s/runs", c, c.Dir(root), root)
			}
		}
	})
}

// study.json is held to the study file's checks: a damaged one cannot
// point the report outside the study folder or list a billion runs.
func TestReadStateChecksSpec(t *testing.T) {
	spec := func(s string) []byte {
		const head = `{"spec": {"Name": "x", "Base": "b.yaml", "TrainGroups": 1, "ValSeeds": 1, `
		return []byte(head + s + `}, "base_config": "", "sets": []}`)
	}
	for _, c := range []struct {
		data []byte
		want string
	}{
		{spec(`"Seeds": 1, "Envs": ["../../etc"], "Arms": [{"Name": "a"}]`), `unknown environment tag "../../etc"`},
		{spec(`"Seeds": 1, "Envs": ["Bandit"], "Arms": [{"Name": "../a"}]`), `name "../a" must be a plain folder name`},
		{spec(`"Seeds": 1000000000, "Envs": ["Bandit"], "Arms": [{"Name": "a"}]`), "seeds is 1000000000; give 1 to 1000"},
		{spec(`"Seeds": 1, "Envs": ["Bandit", "Bandit"], "Arms": [{"Name": "a"}]`), "Bandit is listed twice"},
		{spec(`"Seeds": 1, "Envs": ["Bandit"], "Arms": [{"Name": "a"}], "Extra": 1`), `unknown field "Extra"`},
		{append(spec(`"Seeds": 1, "Envs": ["Bandit"], "Arms": [{"Name": "a"}]`), "{}"...), "data after the JSON object"},
	} {
		if _, err := readState("study.json", c.data); err == nil || !strings.Contains(err.Error(), c.want) ||
			!strings.HasPrefix(err.Error(), "study.json: ") {
			t.Errorf("%s: %v; want an error naming study.json and containing %q", c.data, err, c.want)
		}
	}
	if _, err := readState("study.json", spec(`"Seeds": 2, "Envs": ["Bandit"], "Arms": [{"Name": "a"}]`)); err != nil {
		t.Errorf("a good study.json: %v", err)
	}
}
