package main

import (
	"os"
	"os/signal"
	"sync/atomic"

	"github.com/rs/zerolog/log"
)

// onInterrupt turns Ctrl-C into a flag that long loops poll between steps,
// so they save their work and exit cleanly instead of dying mid-write. The
// returned release stops listening.
func onInterrupt(what string) (stop func() bool, release func()) {
	var interrupted atomic.Bool
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
			interrupted.Store(true)
			log.Warn().Msg("Ctrl-C: " + what)
		case <-done:
		}
	}()
	return interrupted.Load, func() { signal.Stop(sig); close(done) }
}
