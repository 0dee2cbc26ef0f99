package torchrt

import (
	"runtime"
	"testing"
)

// GradEnabled reads the mode without changing it, inside and outside
// NoGrad.
func TestGradEnabled(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, want := range []bool{true, false, true} {
		if _, err := SetGradEnabled(want); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if on, err := GradEnabled(); err != nil || on != want {
				t.Fatalf("GradEnabled() = %v, %v after setting %v", on, err, want)
			}
		}
	}
	err := NoGrad(func() error {
		if on, err := GradEnabled(); err != nil || on {
			t.Errorf("inside NoGrad: GradEnabled() = %v, %v", on, err)
		}
		return nil
	})
	if on, _ := GradEnabled(); err != nil || !on {
		t.Fatalf("after NoGrad: GradEnabled() = %v, %v", on, err)
	}
}
