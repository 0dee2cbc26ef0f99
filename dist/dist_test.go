package dist

import (
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/ragen-go/ragen/dist/c10d"
)

// The tests run real jobs: the test binary starts itself once per rank with
// RAGEN_DIST_WORKER naming the worker below, over loopback with Gloo.
var workers = map[string]func(c *Comm) error{
	"collectives": collectivesWorker,
	"die":         dieWorker,
	"stall":       stallWorker,
	"gradbench":   gradBenchWorker,
}

func TestMain(m *testing.M) {
	if name := os.Getenv("RAGEN_DIST_WORKER"); name != "" {
		runtime.LockOSThread()
		os.Exit(runWorker(name))
	}
	os.Exit(m.Run())
}

func runWorker(name string) int {
	e, err := EnvFromOS()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	timeout := 30 * time.Second
	if v := os.Getenv("RAGEN_DIST_TEST_TIMEOUT"); v != "" {
		timeout, _ = time.ParseDuration(v)
	}
	c, err := Init(e, Options{Timeout: timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer c.Close()
	if err := workers[name](c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// FreePort is a TCP port on loopback nobody listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type result struct {
	code    int
	out     string
	elapsed time.Duration
}

// spawn runs worker on n ranks and waits for all of them.
func spawn(t testing.TB, n int, worker string, env ...string) []result {
	t.Helper()
	port := freePort(t)
	res := make([]result, n)
	var wg sync.WaitGroup
	for r := range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "RAGEN_DIST_WORKER="+worker, "RANK="+strconv.Itoa(r), "LOCAL_RANK="+strconv.Itoa(r),
			"WORLD_SIZE="+strconv.Itoa(n), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port))
		cmd.Env = append(cmd.Env, env...)
		wg.Go(func() {
			start := time.Now()
			out, err := cmd.CombinedOutput()
			res[r] = result{out: string(out), elapsed: time.Since(start)}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				res[r].code = ee.ExitCode()
			} else if err != nil {
				res[r].code, res[r].out = -1, err.Error()
			}
		})
	}
	wg.Wait()
	return res
}

// collectivesWorker checks every collective against values computed by
// hand. Every value is an integer or a power of two, so sums are exact.
func collectivesWorker(c *Comm) error {
	r, w := c.Rank(), c.World()
	v := []float64{float64(r + 1), math.Ldexp(1, -r), -float64(r)}
	if err := c.SumSlice("sum", v); err != nil {
		return err
	}
	wantSum := float64(w * (w + 1) / 2)
	wantPow := 0.0
	for k := range w {
		wantPow += math.Ldexp(1, -k)
	}
	if v[0] != wantSum || v[1] != wantPow || v[2] != -float64(w*(w-1)/2) {
		return fmt.Errorf("sum %v, want [%v %v %v]", v, wantSum, wantPow, -float64(w*(w-1)/2))
	}
	if any, err := c.Any("any", r == w-1); err != nil || !any {
		return fmt.Errorf("any: %v %v", any, err)
	}
	if any, err := c.Any("none", false); err != nil || any {
		return fmt.Errorf("any of nothing: %v %v", any, err)
	}
	parts, err := c.GatherBytes("gather", []byte(strings.Repeat(string(rune('a'+r)), r+1)))
	if err != nil {
		return err
	}
	for k, p := range parts {
		if want := strings.Repeat(string(rune('a'+k)), k+1); string(p) != want {
			return fmt.Errorf("gathered %q from rank %d, want %q", p, k, want)
		}
	}
	if err := gradsCheck(c); err != nil {
		return err
	}
	b := ts.MustOfSlice([]float32{float32(r), float32(10 * r)})
	defer b.MustDrop()
	if err := c.Broadcast("broadcast", []*ts.Tensor{b}); err != nil {
		return err
	}
	if got := b.Float64Values(false); got[0] != 0 || got[1] != 0 {
		return fmt.Errorf("broadcast from rank 0 gave %v", got)
	}
	same := ts.MustOfSlice([]float32{1, 2, 3})
	defer same.MustDrop()
	if _, err := c.CheckSame("same", []*ts.Tensor{same}); err != nil {
		return err
	}
	diff := ts.MustOfSlice([]float32{1, 2, float32(r)})
	defer diff.MustDrop()
	if _, err := c.CheckSame("diff", []*ts.Tensor{diff}); !errors.Is(err, ErrDiverged) {
		return fmt.Errorf("different weights on the ranks: CheckSame said %v", err)
	}
	return c.Barrier("end")
}

// gradsCheck sums three parameters' gradients over bucket sizes that put
// them in one, two and three buckets; the middle parameter has no gradient
// on odd ranks.
func gradsCheck(c *Comm) error {
	r, w := c.Rank(), c.World()
	for _, bucket := range []int64{1 << 20, 40, 1} {
		var params []*ts.Tensor
		for i, n := range []int64{6, 3, 5} {
			p := ts.MustOnes([]int64{n}, gotch.Float, gotch.CPU).MustSetRequiresGrad(true, true)
			defer p.MustDrop()
			params = append(params, p)
			if i == 1 && r%2 == 1 {
				continue
			}
			l := p.MustMulScalar(ts.FloatScalar(float64(r+1)), false).MustSum(gotch.Float, true)
			l.MustBackward()
			l.MustDrop()
		}
		if err := c.wrap("grads", c.group.AllReduceGrads(params, bucket)); err != nil {
			return err
		}
		even := 0.0 // ranks with a gradient for the middle parameter
		for k := range w {
			if k%2 == 0 {
				even += float64(k + 1)
			}
		}
		for i, p := range params {
			want := float64(w * (w + 1) / 2)
			if i == 1 {
				want = even
			}
			g := p.MustGrad(false)
			for _, x := range g.Float64Values(false) {
				if x != want {
					g.MustDrop()
					return fmt.Errorf("bucket %d: parameter %d gradient %v, want %v", bucket, i, x, want)
				}
			}
			g.MustDrop()
		}
	}
	return nil
}

// dieWorker: the last rank exits at once; the others keep calling
// collectives, which must fail (not hang).
func dieWorker(c *Comm) error {
	if c.Rank() == c.World()-1 {
		os.Exit(3)
	}
	for i := 0; ; i++ {
		v := []float64{1}
		if err := c.SumSlice("sum", v); err != nil {
			return fmt.Errorf("after %d all-reduces: %w", i, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stallWorker: the last rank stops answering (alive, but busy for longer
// than the group's timeout); the others' next collective must time out.
func stallWorker(c *Comm) error {
	if c.Rank() == c.World()-1 {
		time.Sleep(8 * time.Second)
		return nil
	}
	return c.SumSlice("sum", []float64{1})
}

// needGloo skips a test of a real CPU job when this build has no Gloo (the
// libtorch it was prepared for ships no gloo headers: PyPI's torch), after
// checking that such a job fails saying so.
func needGloo(t *testing.T) {
	t.Helper()
	if c10d.HasGloo() {
		return
	}
	for r, res := range spawn(t, 2, "collectives") {
		if res.code != 2 || !strings.Contains(res.out, "this build has no Gloo") {
			t.Fatalf("without Gloo, rank %d: exit %d, want 2 and a message naming Gloo:\n%s", r, res.code, res.out)
		}
	}
	t.Skip("this build has no Gloo process group (its libtorch ships no gloo headers; see scripts/gotchprep/shimheaders.go); checked that a job says so")
}

func TestCollectives(t *testing.T) {
	needGloo(t)
	for _, n := range []int{2, 4} {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			for r, res := range spawn(t, n, "collectives") {
				if res.code != 0 {
					t.Errorf("rank %d exit %d:\n%s", r, res.code, res.out)
				}
			}
		})
	}
}

// A rank that dies makes the others fail with a clear error, well within
// 60 s, instead of hanging.
func TestRankDeath(t *testing.T) {
	needGloo(t)
	res := spawn(t, 3, "die")
	if res[2].code != 3 {
		t.Fatalf("the dying rank exited %d: %s", res[2].code, res[2].out)
	}
	for r, x := range res[:2] {
		if x.code != 1 || !strings.Contains(x.out, "another rank died") {
			t.Errorf("rank %d: exit %d, output:\n%s", r, x.code, x.out)
		}
		if x.elapsed > 60*time.Second {
			t.Errorf("rank %d took %v to notice", r, x.elapsed)
		}
		t.Logf("rank %d noticed after %v: %s", r, x.elapsed.Round(time.Millisecond), strings.TrimSpace(x.out))
	}
}

func TestEnvFrom(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	e, err := envFrom(env())
	if err != nil || e.Distributed() || e.WorldSize != 1 {
		t.Fatalf("no variables: %+v %v", e, err)
	}
	e, err = envFrom(env("WORLD_SIZE", "4", "RANK", "2", "LOCAL_RANK", "0", "MASTER_ADDR", "node0", "MASTER_PORT", "1234"))
	if err != nil || e != (Env{Rank: 2, WorldSize: 4, MasterAddr: "node0", MasterPort: 1234}) {
		t.Fatalf("torchrun variables: %+v %v", e, err)
	}
	for _, bad := range [][]string{
		{"WORLD_SIZE", "two", "RANK", "0"},
		{"WORLD_SIZE", "2", "RANK", "2"},
		{"WORLD_SIZE", "2"},
		{"WORLD_SIZE", "2", "RANK", "-1"},
		{"WORLD_SIZE", "2", "RANK", "0", "MASTER_PORT", "70000"},
	} {
		if _, err := envFrom(env(bad...)); err == nil || !strings.Contains(err.Error(), "environment variable") {
			t.Errorf("%v: error %v", bad, err)
		}
	}
}

// A rank that stops answering makes the others fail once the group's
// timeout (--dist-timeout in ragen train) has passed.
func TestRankTimeout(t *testing.T) {
	needGloo(t)
	res := spawn(t, 2, "stall", "RAGEN_DIST_TEST_TIMEOUT=3s")
	x := res[0]
	if x.code != 1 || !strings.Contains(x.out, "timed out") && !strings.Contains(x.out, "Timed out") {
		t.Fatalf("rank 0: exit %d, output:\n%s", x.code, x.out)
	}
	if x.elapsed > 15*time.Second {
		t.Errorf("rank 0 took %v to time out at 3 s", x.elapsed)
	}
	t.Logf("rank 0 gave up after %v: %s", x.elapsed.Round(time.Millisecond), strings.TrimSpace(x.out))
}

// gradBenchWorker sums the gradients of a 46M-parameter model's worth of
// tensors (the starpo 50M preset's shapes, rounded) a few times and prints
// the mean seconds per all-reduce.
func gradBenchWorker(c *Comm) error {
	var params []*ts.Tensor
	for i := range 12 * 9 { // 12 layers × 9 tensors of ~0.4M
		n := int64(393216)
		if i == 0 {
			n = 748 * 512 // embeddings
		}
		p := ts.MustZeros([]int64{n}, gotch.Float, gotch.CPU).MustSetRequiresGrad(true, true)
		defer p.MustDrop()
		l := p.MustSum(gotch.Float, false)
		l.MustBackward()
		l.MustDrop()
		params = append(params, p)
	}
	const reps = 5
	if err := c.AllReduceGrads(params); err != nil { // warm-up: connections, buffers
		return err
	}
	start := time.Now()
	for range reps {
		if err := c.AllReduceGrads(params); err != nil {
			return err
		}
	}
	bytes := 0
	for _, p := range params {
		bytes += int(p.Numel()) * 4
	}
	fmt.Printf("seconds/allreduce %.6f MB %d\n", time.Since(start).Seconds()/reps, bytes>>20)
	return nil
}

// BenchmarkAllReduceGrads2Ranks: the bucketed gradient sum of two ranks on
// loopback Gloo, for ~45M fp32 parameters (s/op is one all-reduce):
//
//	go test -run '^$' -bench AllReduceGrads ./dist/
func BenchmarkAllReduceGrads2Ranks(b *testing.B) {
	if !c10d.HasGloo() {
		b.Skip("this build has no Gloo process group")
	}
	var secs float64
	for range b.N {
		res := spawn(b, 2, "gradbench")
		for r, x := range res {
			if x.code != 0 {
				b.Fatalf("rank %d: exit %d: %s", r, x.code, x.out)
			}
		}
		var s float64
		var mb int
		if _, err := fmt.Sscanf(res[0].out, "seconds/allreduce %f MB %d", &s, &mb); err != nil {
			b.Fatalf("rank 0 printed %q: %v", res[0].out, err)
		}
		secs += s
		b.ReportMetric(float64(mb), "MB")
	}
	b.ReportMetric(secs/float64(b.N), "s/allreduce")
}
