package torchrt

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/libtch"
	"github.com/sugarme/gotch/ts"
)

// Size, DeviceOf and CopyInto replace gotch's MustSize, MustDevice and
// Copy_, which exit the process on failure; these panic with an *OpError.

// Size is t's shape.
func Size(t *ts.Tensor) []int64 {
	s, err := t.Size()
	Check(err)
	return s
}

// DeviceOf is t's device.
func DeviceOf(t *ts.Tensor) gotch.Device {
	d, err := t.Device()
	Check(err)
	return d
}

// CopyInto copies src into dst in place (dst.copy_(src)), converting dtype
// and device.
func CopyInto(dst, src *ts.Tensor) {
	// libtorch's error is per OS thread (scripts/gotchprep/lockthread.go).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	libtch.AtCopy_(libtch.Ctensor(dst.Ctensor()), libtch.Ctensor(src.Ctensor()))
	Check(ts.TorchErr())
}

// TensorFromBytes makes a CPU tensor holding a copy of data (little-endian
// elements of dt, row-major) in one copy: data may be a file mapping.
func TensorFromBytes(data []byte, shape []int64, dt gotch.DType) (*ts.Tensor, error) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	if int64(len(data)) != n*int64(dt.Size()) {
		return nil, fmt.Errorf("%d bytes do not hold %v elements of %v", len(data), shape, dt)
	}
	dims := shape
	if len(dims) == 0 {
		dims = []int64{1}
	}
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0])
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := libtch.AtTensorOfData(p, dims, uint(len(dims)), dt.Size(), int(dt.CKind()))
	if err := ts.TorchErr(); err != nil {
		return nil, err
	}
	t := ts.FromCtensor(unsafe.Pointer(c))
	if len(shape) == 0 {
		return t.Reshape([]int64{}, true)
	}
	return t, nil
}

// TensorBytes copies t out of libtorch as little-endian bytes of dt, from a
// fresh CPU copy (never aliasing t).
func TensorBytes(t *ts.Tensor, dt gotch.DType) (b []byte, err error) {
	defer Catch(&err, "reading a tensor")
	c := Must(t.ToDevice(gotch.CPU, dt, false, true, false))
	defer c.MustDrop()
	cc := Must(c.Contiguous(false))
	defer cc.MustDrop()
	n := int(cc.Numel()) * int(dt.Size())
	b = make([]byte, n)
	if n > 0 {
		p, err := cc.DataPtr()
		Check(err)
		copy(b, unsafe.Slice((*byte)(p), n))
	}
	return b, nil
}

// Matrix makes a [rows, cols] tensor on dev from row-major values.
func Matrix[T int64 | float32](vals []T, rows, cols int64, dev gotch.Device) *ts.Tensor {
	t := Must(ts.OfSlice(vals))
	t = Must(t.View([]int64{rows, cols}, true))
	if dev.IsCuda() {
		t = Must(t.ToDevice(dev, t.DType(), false, false, true))
	}
	return t
}
