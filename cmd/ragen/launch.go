package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func init() {
	register(command{name: "launch", summary: "run a command as N data-parallel processes on this machine (like torchrun)", run: runLaunch})
}

// runLaunch starts --nproc copies of this binary running the given ragen
// command, with the variables a PyTorch launcher sets (RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Rank 0's output
// passes through; the others' lines are prefixed with their rank. When one
// exits with an error the others are stopped (SIGTERM, then SIGKILL after
// --grace), as torchrun does, and launch fails naming it.
func runLaunch(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("launch", stderr)
	nproc := fs.Int("nproc", 2, "processes to start (one per device)")
	addr := fs.String("master-addr", "127.0.0.1", "address rank 0's store listens on")
	port := fs.Int("master-port", 0, "port of rank 0's store (0: a free one)")
	grace := fs.Duration("grace", 10*time.Second, "after a rank fails, how long the others get to exit before they are killed")
	fs.SetInterspersed(false)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	cmdArgs := fs.Args()
	switch {
	case *nproc < 1:
		return fmt.Errorf("--nproc %d must be at least 1", *nproc)
	case *port < 0 || *port > 65535:
		return fmt.Errorf("--master-port %d is not a TCP port", *port)
	case len(cmdArgs) == 0:
		return errors.New("no command to launch: give one after the flags, e.g. ragen launch --nproc 2 train --config configs/sokoban.yaml --model DIR")
	case cmdArgs[0] == "launch":
		return errors.New("launch cannot launch itself")
	}
	if _, ok := commands[cmdArgs[0]]; !ok {
		return fmt.Errorf("unknown command %q to launch; run 'ragen help' for the list", cmdArgs[0])
	}
	if !dataParallel[cmdArgs[0]] {
		return fmt.Errorf("%q does not run data-parallel (only train does): run it as one process", cmdArgs[0])
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary to launch: %w", err)
	}
	if *port == 0 {
		if *port, err = freePort(*addr); err != nil {
			return fmt.Errorf("--master-addr %s: %w", *addr, err)
		}
	}
	return launch(self, cmdArgs, *nproc, *addr, *port, *grace, stdout, stderr)
}

// dataParallel are the commands that join a job; the others would run N
// copies writing the same files.
var dataParallel = map[string]bool{"train": true}

// singleProcess refuses to run command name as one rank of a job (under
// torchrun or srun), where every copy would write the same files.
func singleProcess(name string) error {
	if v := os.Getenv("WORLD_SIZE"); v != "" && v != "1" {
		return fmt.Errorf("%s runs as one process, but WORLD_SIZE=%s is set (only train runs data-parallel)", name, v)
	}
	return nil
}

// freePort asks the kernel for a port on addr nobody listens on now.
func freePort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type exit struct {
	rank int
	err  error
}

func launch(self string, args []string, n int, addr string, port int, grace time.Duration, stdout, stderr io.Writer) error {
	procs := make([]*exec.Cmd, n)
	var outMu sync.Mutex
	var writers []*lineWriter
	for r := range n {
		c := exec.Command(self, args...)
		c.Env = append(os.Environ(), "RANK="+strconv.Itoa(r), "LOCAL_RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(n),
			"LOCAL_WORLD_SIZE="+strconv.Itoa(n), "MASTER_ADDR="+addr, "MASTER_PORT="+strconv.Itoa(port))
		if r == 0 {
			c.Stdout, c.Stderr = stdout, stderr
		} else {
			p := fmt.Sprintf("[rank %d] ", r)
			o, e := &lineWriter{mu: &outMu, w: stdout, prefix: p}, &lineWriter{mu: &outMu, w: stderr, prefix: p}
			c.Stdout, c.Stderr = o, e
			writers = append(writers, o, e)
		}
		procs[r] = c
	}
	// Ctrl-C reaches every rank from the terminal; each saves a checkpoint
	// and exits, so launch only waits. SIGTERM is passed on.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	exits := make(chan exit, n)
	done := make([]bool, n) // exited, so not to be signalled
	for r, c := range procs {
		if err := c.Start(); err != nil {
			for k := range procs[:r] {
				procs[k].Process.Kill()
			}
			return fmt.Errorf("starting rank %d: %w", r, err)
		}
		go func() { exits <- exit{r, c.Wait()} }()
	}
	fmt.Fprintf(stderr, "launch: %d ranks of %q, store at %s:%d\n", n, args[0], addr, port)
	var first *exit
	var kill <-chan time.Time
	signalAll := func(s os.Signal) {
		for r, c := range procs {
			if !done[r] {
				c.Process.Signal(s)
			}
		}
	}
	for left := n; left > 0; {
		select {
		case e := <-exits:
			left--
			done[e.rank] = true
			if e.err != nil && first == nil {
				first = &e
				if left > 0 {
					fmt.Fprintf(stderr, "launch: rank %d failed (%v); stopping the other %d\n", e.rank, e.err, left)
					signalAll(syscall.SIGTERM)
					kill = time.After(grace)
				}
			}
		case s := <-sig:
			if s == syscall.SIGTERM {
				signalAll(syscall.SIGTERM)
			}
		case <-kill:
			fmt.Fprintf(stderr, "launch: ranks still running %v after rank %d failed; killing them\n", grace, first.rank)
			signalAll(syscall.SIGKILL)
		}
	}
	for _, w := range writers {
		w.flush()
	}
	if first != nil {
		return fmt.Errorf("rank %d of %d failed: %v (its messages are above)", first.rank, n, first.err)
	}
	return nil
}

// lineWriter copies whole lines to w, each starting with prefix, so the
// ranks' lines never interleave mid-line.
type lineWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.emit(l.buf[:i+1])
		l.buf = l.buf[i+1:]
	}
}

func (l *lineWriter) emit(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, l.prefix)
	l.w.Write(line)
}

// flush writes a last line without its newline.
func (l *lineWriter) flush() {
	if len(l.buf) > 0 {
		l.emit(append(l.buf, '\n'))
		l.buf = nil
	}
}
