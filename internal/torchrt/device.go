package torchrt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/libtch"
	"github.com/sugarme/gotch/prepared"
)

// ChooseDevice returns the first GPU when libtorch sees one, else the CPU.
func ChooseDevice() gotch.Device {
	return gotch.CudaIfAvailable()
}

// ParseDevice turns a --device value into a device: "auto" (GPU if any),
// "cpu", "cuda" or "cuda:N". Asking for a GPU that libtorch cannot see is an
// error, not a silent fall-back to the CPU.
func ParseDevice(s string) (gotch.Device, error) {
	switch s {
	case "", "auto":
		return ChooseDevice(), nil
	case "cpu":
		return gotch.CPU, nil
	}
	idx := 0
	if rest, ok := strings.CutPrefix(s, "cuda"); ok {
		if rest != "" {
			n, err := strconv.Atoi(strings.TrimPrefix(rest, ":"))
			if err != nil || !strings.HasPrefix(rest, ":") || n < 0 {
				return gotch.CPU, fmt.Errorf("device %q is not one of auto, cpu, cuda, cuda:N", s)
			}
			idx = n
		}
		if n := GPUCount(); idx >= n {
			return gotch.CPU, fmt.Errorf("device %q asked for, but libtorch sees %d GPU(s)%s", s, n, cudaHint())
		}
		return gotch.CudaBuilder(uint(idx)), nil
	}
	return gotch.CPU, fmt.Errorf("device %q is not one of auto, cpu, cuda, cuda:N", s)
}

func cudaHint() string {
	if !prepared.CUDA {
		return " (this build links a CPU-only libtorch; see docs/gpu.md)"
	}
	return ""
}

// GPUCount is the number of GPUs libtorch can use.
func GPUCount() int {
	if !libtch.AtcCudaIsAvailable() {
		return 0
	}
	return int(gotch.CUDA.DeviceCount())
}

// DeviceName is the short name of a device: "cpu" or "cuda:N".
func DeviceName(d gotch.Device) string {
	if d.IsCuda() {
		return fmt.Sprintf("cuda:%d", d.Value)
	}
	return "cpu"
}
