// Package dist is data parallelism over libtorch's c10d: one process per
// device, configured by the variables every PyTorch launcher sets (RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), so the same binary
// runs under torchrun, srun, a Kubernetes PyTorchJob or `ragen launch`.
package dist

import (
	"fmt"
	"os"
	"strconv"
)

// Env is one process's place in the job.
type Env struct {
	Rank       int    // RANK: this process, 0 … WorldSize−1
	WorldSize  int    // WORLD_SIZE: processes in the job
	LocalRank  int    // LOCAL_RANK: this process on its machine (its device index)
	MasterAddr string // MASTER_ADDR: host of rank 0's store
	MasterPort int    // MASTER_PORT: its port
}

// Distributed tells whether the job has more than one process.
func (e Env) Distributed() bool { return e.WorldSize > 1 }

// EnvFromOS reads the job's variables; without WORLD_SIZE the process runs
// alone (rank 0 of 1).
func EnvFromOS() (Env, error) { return envFrom(os.LookupEnv) }

func envFrom(lookup func(string) (string, bool)) (Env, error) {
	e := Env{WorldSize: 1, MasterAddr: "127.0.0.1", MasterPort: 29500}
	num := func(name string, dst *int, lo int) error {
		v, ok := lookup(name)
		if !ok || v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo {
			return fmt.Errorf("environment variable %s=%q is not an integer ≥ %d", name, v, lo)
		}
		*dst = n
		return nil
	}
	if _, ok := lookup("WORLD_SIZE"); !ok {
		return e, nil
	}
	for _, f := range []struct {
		name string
		dst  *int
		lo   int
	}{{"WORLD_SIZE", &e.WorldSize, 1}, {"RANK", &e.Rank, 0}, {"LOCAL_RANK", &e.LocalRank, 0}, {"MASTER_PORT", &e.MasterPort, 1}} {
		if err := num(f.name, f.dst, f.lo); err != nil {
			return e, err
		}
	}
	if v, ok := lookup("MASTER_ADDR"); ok && v != "" {
		e.MasterAddr = v
	}
	switch {
	case e.Rank >= e.WorldSize:
		return e, fmt.Errorf("environment variable RANK=%d is not below WORLD_SIZE=%d", e.Rank, e.WorldSize)
	case e.MasterPort > 65535:
		return e, fmt.Errorf("environment variable MASTER_PORT=%d is not a TCP port", e.MasterPort)
	}
	if _, ok := lookup("RANK"); !ok && e.WorldSize > 1 {
		return e, fmt.Errorf("environment variable WORLD_SIZE=%d is set but RANK is not", e.WorldSize)
	}
	return e, nil
}
