package torchrt

import (
	"github.com/sugarme/gotch/prepared"
)

// Info describes the libtorch build and the device this process uses.
type Info struct {
	LibtorchVersion string  `json:"libtorch_version"`
	LibtorchDir     string  `json:"libtorch_dir"`
	LibtorchSource  string  `json:"libtorch_source"`
	CUDALinked      bool    `json:"cuda_linked"`
	Device          string  `json:"device"`
	GPUCount        int     `json:"gpu_count"`
	StubbedWrappers int     `json:"stubbed_wrappers"`
	Threads         Threads `json:"threads"`
	BLASCore        string  `json:"blas_core"` // OpenBLAS's kernel set; "" when OpenBLAS is not the BLAS
}

// Describe reports what this binary was built against and runs on.
func Describe() Info {
	dev := ChooseDevice()
	return Info{
		LibtorchVersion: prepared.LibtorchVersion,
		LibtorchDir:     prepared.LibtorchDir,
		LibtorchSource:  prepared.LibtorchSource,
		CUDALinked:      prepared.CUDA,
		Device:          DeviceName(dev),
		GPUCount:        GPUCount(),
		StubbedWrappers: prepared.Stubbed,
		Threads:         CurrentThreads(),
		BLASCore:        BLASCore(),
	}
}
