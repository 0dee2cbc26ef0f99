package torchrt

// #include <stdint.h>
// int at_grad_set_enabled(int b);
import "C"

import (
	"fmt"
	"runtime"

	"github.com/sugarme/gotch/ts"
)

// NoGrad runs fn with autograd off and restores the previous grad mode
// afterwards, also when fn panics. gotch's own ts.NoGrad always switches
// grad back on and does not survive a panic. Grad mode is per OS thread, so
// the goroutine stays on its thread meanwhile: otherwise a migration would
// switch one thread off and the restore would land on another.
func NoGrad(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prev, err := SetGradEnabled(false)
	if err != nil {
		return err
	}
	defer SetGradEnabled(prev)
	return fn()
}

// SetGradEnabled sets this thread's autograd mode and returns the previous
// one. gotch's ts.GradSetEnabled reads the C int result through an 8-byte
// Go int and so reports garbage (always "off"): restoring from it would
// leave autograd off for good.
func SetGradEnabled(on bool) (prev bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := C.int(0)
	if on {
		b = 1
	}
	switch r := C.at_grad_set_enabled(b); r {
	case 0, 1:
		return r == 1, nil
	}
	if err := ts.TorchErr(); err != nil {
		return false, fmt.Errorf("switching autograd: %w", err)
	}
	return false, fmt.Errorf("switching autograd: unexpected result")
}

// GradEnabled reports this thread's autograd mode (call it on a locked
// thread, as every libtorch call here is).
func GradEnabled() (bool, error) {
	on, err := SetGradEnabled(false)
	if err == nil && on {
		_, err = SetGradEnabled(true)
	}
	return on, err
}
