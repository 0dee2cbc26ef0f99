package torchrt

import (
	"fmt"

	"github.com/sugarme/gotch/ts"
)

// NoGrad runs fn with autograd off and restores the previous grad mode
// afterwards, also when fn panics. gotch's own ts.NoGrad always switches
// grad back on and does not survive a panic.
func NoGrad(fn func() error) error {
	prev, err := ts.GradSetEnabled(false)
	if err != nil {
		return fmt.Errorf("switching autograd off: %w", err)
	}
	defer ts.GradSetEnabled(prev)
	return fn()
}
