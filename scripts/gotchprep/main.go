// Command gotchprep prepares a copy of github.com/sugarme/gotch for the
// libtorch found on this machine, so that the project builds against it
// without touching the Go module cache:
//
//   - libtch/lib.go gets the include paths, link flags and rpath of that
//     libtorch (CPU, or CUDA when libtorch_cuda.so is present);
//   - every generated C++ wrapper that does not compile against it (ops added
//     after that version, changed signatures) gets a body that reports
//     "<name> is not available in this libtorch"; the list is written to
//     STUBBED.txt beside the copy;
//   - gotch's output slots allocated with C.malloc(0) (a leak per op and an
//     overflow for multi-output ops) are sized and freed;
//   - the 100 kB of Go "ballast" that gotch allocates with every tensor (to
//     make the GC run its finalizers sooner) is removed: it cost ~40 µs and a
//     100 kB clear per op. This project drops its tensors explicitly;
//   - in-place ops (Add_, Mul_, ...) replace the tensor's C handle with the
//     new one libtorch returns and never free the old one, which keeps the
//     tensor's storage alive after Drop: the old handle is now freed;
//   - against libtorch 2.x, absent optional tensors (ts.None) reach libtorch
//     as c10::nullopt instead of an undefined tensor, which SDPA rejects
//     (optional.go);
//   - every function that reads libtorch's thread-local error back (TorchErr)
//     stays on one OS thread meanwhile: a goroutine that moved between the op
//     and the check lost the error and freed a garbage handle (lockthread.go).
//
// The result is deterministic for a given libtorch, and a stamp makes a
// second run a no-op. go.mod replaces gotch with the prepared folder.
//
// Usage: go run ./scripts/gotchprep [-out third_party/gotch] [-force] [-find]
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

const (
	gotchModule  = "github.com/sugarme/gotch"
	gotchVersion = "v0.9.1"
	// prepRevision changes whenever the transformation below changes, so that
	// existing copies are prepared again.
	prepRevision = 8
	// exitNoLibtorch is the exit status of -find when nothing was found; the
	// deps script then offers to install one.
	exitNoLibtorch = 3
)

// stamp records what a prepared copy was made from.
type stamp struct {
	Revision int      `json:"revision"`
	Gotch    string   `json:"gotch"`
	Libtorch Libtorch `json:"libtorch"`
	Stubbed  []string `json:"stubbed"`
}

func main() {
	out := flag.String("out", "third_party/gotch", "folder for the prepared copy")
	force := flag.Bool("force", false, "prepare again even if the copy is up to date")
	find := flag.Bool("find", false, "only report the libtorch that would be used, as JSON")
	shim := flag.String("c10d", "dist/c10d", "folder of the c10d shim to write cgo_flags.go into (empty: none)")
	graphs := flag.String("cudagraph", "internal/cudagraph", "folder of the CUDA-graph shim to write cgo_flags.go into (empty: none)")
	flag.Parse()
	lt, err := findLibtorch(os.Getenv("LIBTORCH"), pythonTorch, defaultSystemRoots)
	if errors.Is(err, errNoLibtorch) {
		fmt.Fprintln(os.Stderr, "gotchprep: no libtorch found: set $LIBTORCH to an unpacked libtorch folder, install PyTorch, or install Debian's libtorch-dev")
		os.Exit(exitNoLibtorch)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotchprep:", err)
		os.Exit(1)
	}
	if *find {
		json.NewEncoder(os.Stdout).Encode(lt)
		return
	}
	if err := prepare(*out, lt, *force); err != nil {
		fmt.Fprintln(os.Stderr, "gotchprep:", err)
		os.Exit(1)
	}
	if *shim != "" {
		if err := writeC10dFlags(*shim, lt); err != nil {
			fmt.Fprintln(os.Stderr, "gotchprep: writing the c10d shim's flags:", err)
			os.Exit(1)
		}
	}
	if *graphs != "" {
		if err := writeCUDAGraphFlags(*graphs, lt); err != nil {
			fmt.Fprintln(os.Stderr, "gotchprep: writing the CUDA-graph shim's flags:", err)
			os.Exit(1)
		}
	}
}

func prepare(out string, lt Libtorch, force bool) error {
	want := stamp{Revision: prepRevision, Gotch: gotchVersion, Libtorch: lt}
	if !force && upToDate(out, want) {
		fmt.Printf("gotchprep: %s is up to date (libtorch %s, %s, from %s)\n", out, lt.Version, device(lt), lt.Source)
		return nil
	}
	src, err := moduleDir()
	if err != nil {
		return err
	}
	fmt.Printf("gotchprep: preparing gotch %s for libtorch %s (%s, from %s: %s)\n", gotchVersion, lt.Version, device(lt), lt.Source, lt.LibDir)
	tmp := out + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := copyTree(src, tmp, map[string]bool{"example": true, "gen": true}); err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if err := fixAllSlots(filepath.Join(tmp, "ts")); err != nil {
		return err
	}
	if err := lockAllThreads(filepath.Join(tmp, "ts")); err != nil {
		return err
	}
	if err := dropGCBallast(filepath.Join(tmp, "ts", "tensor.go")); err != nil {
		return err
	}
	if err := freeReplacedHandles(filepath.Join(tmp, "ts", "tensor-generated.go")); err != nil {
		return err
	}
	if err := passAbsentTensorsAsNullopt(filepath.Join(tmp, "libtch", "torch_api_generated.cpp.h"), lt); err != nil {
		return err
	}
	if err := writeLibGo(filepath.Join(tmp, "libtch"), lt, nil); err != nil {
		return err
	}
	stubbed, err := stubUntilItCompiles(filepath.Join(tmp, "libtch"), lt)
	if err != nil {
		return err
	}
	want.Stubbed = stubbed
	if err := writeLibGo(filepath.Join(tmp, "libtch"), lt, stubbed); err != nil {
		return err
	}
	if err := writeStubList(filepath.Join(tmp, "STUBBED.txt"), lt, stubbed); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(want, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, ".prepared"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Printf("gotchprep: %s ready; %d wrappers stubbed (listed in %s)\n", out, len(stubbed), filepath.Join(out, "STUBBED.txt"))
	return nil
}

func device(lt Libtorch) string {
	if lt.CUDA {
		return "CUDA"
	}
	return "CPU"
}

func upToDate(out string, want stamp) bool {
	data, err := os.ReadFile(filepath.Join(out, ".prepared"))
	if err != nil {
		return false
	}
	var have stamp
	if json.Unmarshal(data, &have) != nil {
		return false
	}
	return have.Revision == want.Revision && have.Gotch == want.Gotch && have.Libtorch == want.Libtorch
}

// moduleDir downloads gotch into the module cache if needed and returns its
// (read-only) folder there.
func moduleDir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", gotchModule+"@"+gotchVersion)
	cmd.Stderr = os.Stderr
	data, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", gotchModule, gotchVersion, err)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(data, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s gave no folder: %s", gotchModule, gotchVersion, info.Error)
	}
	return info.Dir, nil
}

// fixAllSlots sizes and frees the output slots in gotch's tensor package.
// jit.go is left as it is: its TorchScript list readers size their slots
// from a run-time length, and this project does not use TorchScript.
func fixAllSlots(tsDir string) error {
	total, err := rewriteGoFiles(tsDir, "jit.go", fixSlots)
	if err != nil {
		return err
	}
	fmt.Printf("gotchprep: sized and freed %d output slots in %s\n", total, tsDir)
	return nil
}

// rewriteGoFiles applies rewrite to every non-test Go file in dir except the
// one named skip, writes back the files it changed (n > 0), and returns the
// sum of the counts.
func rewriteGoFiles(dir, skip string, rewrite func(string) (string, int, error)) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == skip {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		out, n, err := rewrite(string(src))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if n == 0 {
			continue
		}
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// stubUntilItCompiles checks the wrapper file with g++ -fsyntax-only and
// stubs the wrappers the errors fall in, until it compiles.
func stubUntilItCompiles(libtchDir string, lt Libtorch) ([]string, error) {
	gen := filepath.Join(libtchDir, "torch_api_generated.cpp.h")
	var all []string
	for round := 1; round <= 8; round++ {
		start := time.Now()
		cmd := exec.Command("g++", lt.syntaxArgs(libtchDir)...)
		diag, err := cmd.CombinedOutput()
		if err == nil {
			fmt.Printf("gotchprep: wrappers compile (check %d took %.0fs)\n", round, time.Since(start).Seconds())
			sort.Strings(all)
			return all, nil
		}
		if _, ok := err.(*exec.ExitError); !ok {
			return nil, fmt.Errorf("running g++: %w", err)
		}
		src, err := os.ReadFile(gen)
		if err != nil {
			return nil, err
		}
		lines := strings.Split(string(src), "\n")
		ws, err := parseWrappers(lines)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gen, err)
		}
		names, unplaced := failingWrappers(ws, string(diag))
		if len(names) == 0 {
			return nil, fmt.Errorf("torch_api.cpp does not compile against libtorch %s and the errors are outside the generated wrappers:\n%s", lt.Version, firstLines(unplaced, string(diag), 20))
		}
		fmt.Printf("gotchprep: check %d (%.0fs): stubbing %d wrappers\n", round, time.Since(start).Seconds(), len(names))
		lines = stubWrappers(lines, ws, names, lt.Version)
		if err := os.WriteFile(gen, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			return nil, err
		}
		all = append(all, names...)
	}
	return nil, fmt.Errorf("wrappers still do not compile after 8 rounds of stubbing")
}

func firstLines(unplaced []string, diag string, n int) string {
	if len(unplaced) == 0 {
		unplaced = strings.Split(diag, "\n")
	}
	if len(unplaced) > n {
		unplaced = unplaced[:n]
	}
	return strings.Join(unplaced, "\n")
}

func writeStubList(path string, lt Libtorch, stubbed []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# gotch %s wrappers stubbed for libtorch %s (%s, %s)\n", gotchVersion, lt.Version, device(lt), lt.LibDir)
	fmt.Fprintf(&b, "# each reports \"<name> is not available in this libtorch\" when called; %d in all\n", len(stubbed))
	b.WriteString(stubLines(stubbed))
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
