package model

import (
	"fmt"

	"github.com/sugarme/gotch"

	"github.com/ragen-go/ragen/model/safetensors"
)

// ParseDType reads a --dtype value. "auto" is bf16 on a GPU and fp32 on the
// CPU (bf16 matmuls there are fast with AMX, but the CPU default stays the
// exact one).
func ParseDType(s string, dev gotch.Device) (gotch.DType, error) {
	switch s {
	case "", "auto":
		if dev.IsCuda() {
			return gotch.BFloat16, nil
		}
		return gotch.Float, nil
	case "fp32", "float32":
		return gotch.Float, nil
	case "bf16", "bfloat16":
		return gotch.BFloat16, nil
	case "fp16", "float16":
		return gotch.Half, nil
	}
	return gotch.Float, fmt.Errorf("dtype %q is not one of auto, fp32, bf16, fp16", s)
}

// DTypeFlag is the --dtype spelling of a dtype (what ParseDType reads).
func DTypeFlag(dt gotch.DType) string {
	switch dt {
	case gotch.BFloat16:
		return "bf16"
	case gotch.Half:
		return "fp16"
	}
	return "fp32"
}

// DTypeName is the HuggingFace torch_dtype spelling of a dtype.
func DTypeName(dt gotch.DType) string {
	switch dt {
	case gotch.BFloat16:
		return "bfloat16"
	case gotch.Half:
		return "float16"
	case gotch.Double:
		return "float64"
	}
	return "float32"
}

// fromSafetensors maps a stored element type to a torch dtype.
func fromSafetensors(d safetensors.DType) (gotch.DType, error) {
	switch d {
	case safetensors.F32:
		return gotch.Float, nil
	case safetensors.BF16:
		return gotch.BFloat16, nil
	case safetensors.F16:
		return gotch.Half, nil
	case safetensors.F64:
		return gotch.Double, nil
	}
	return gotch.Float, fmt.Errorf("element type %s is not a floating-point weight type", d)
}

// toSafetensors maps a torch dtype to its stored element type.
func toSafetensors(dt gotch.DType) (safetensors.DType, error) {
	switch dt {
	case gotch.Float:
		return safetensors.F32, nil
	case gotch.BFloat16:
		return safetensors.BF16, nil
	case gotch.Half:
		return safetensors.F16, nil
	}
	return "", fmt.Errorf("dtype %v cannot be exported", dt)
}
