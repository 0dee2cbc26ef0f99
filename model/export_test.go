package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model/safetensors"
)

// Export → load round-trips bit-exactly, single-file and sharded, and the
// folder has HuggingFace's layout.
func TestExportRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tied  bool
		shard int64
		files []string
	}{
		{"single", true, 0, []string{"config.json", "generation_config.json", "model.safetensors"}},
		{"sharded", false, 30_000, []string{"config.json", "generation_config.json", "model.safetensors.index.json", "model-00001-of-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := writeTiny(t, tc.tied, 0)
			m := loadTiny(t, dir)
			out := filepath.Join(t.TempDir(), "export")
			if err := Export(m.Cfg, m.Params(), out, ExportOptions{DType: gotch.Float, ShardBytes: tc.shard, TokenizerFrom: dir}); err != nil {
				t.Fatal(err)
			}
			listing := dirNames(t, out)
			for _, f := range tc.files {
				if !strings.Contains(listing, f) {
					t.Errorf("export lacks %s (has %s)", f, listing)
				}
			}
			back := loadTiny(t, out)
			a, b := m.Params(), back.Params()
			if len(a) != len(b) {
				t.Fatalf("%d params exported, %d loaded back", len(a), len(b))
			}
			for i := range a {
				x, y := Float32s(a[i].T), Float32s(b[i].T)
				for j := range x {
					if x[j] != y[j] {
						t.Fatalf("%s[%d]: %v exported, %v loaded back", a[i].Name, j, x[j], y[j])
					}
				}
			}
			cfg, err := LoadConfig(out)
			if err != nil || cfg.TorchDtype != "float32" || cfg.TieWordEmbeddings != tc.tied {
				t.Fatalf("exported config: %+v, %v", cfg, err)
			}
		})
	}
}

// A bf16 export stores bf16 and loads back to the same rounded values.
func TestExportBF16(t *testing.T) {
	dir, _ := writeTiny(t, true, 0)
	m := loadTiny(t, dir)
	out := filepath.Join(t.TempDir(), "bf16")
	if err := Export(m.Cfg, m.Params(), out, ExportOptions{DType: gotch.BFloat16}); err != nil {
		t.Fatal(err)
	}
	ck, err := safetensors.OpenDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	info, err := ck.Info("model.norm.weight")
	if err != nil || info.DType != safetensors.BF16 {
		t.Fatalf("model.norm.weight stored as %v (%v), want BF16", info.DType, err)
	}
	stored, _ := ck.Float32("model.norm.weight")
	orig := Float32s(m.Norm.Weight)
	for i := range orig {
		if want := safetensors.BF16ToFloat32(safetensors.Float32ToBF16(orig[i])); stored[i] != want {
			t.Fatalf("norm[%d] = %v, want bf16(%v) = %v", i, stored[i], orig[i], want)
		}
	}
}

func dirNames(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name())
	}
	return strings.Join(ns, " ")
}
