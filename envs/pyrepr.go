package envs

import (
	"math"
	"strconv"
	"strings"
)

// PyFloat formats x as Python's repr(float) does, because RAGEN prints
// rewards into prompts and observations with it: the shortest digits that
// round-trip, a ".0" on whole numbers, and exponent form (two-digit minimum,
// signed) below 1e-4 or from 1e16 up. Examples: 10.9, -0.30000000000000004,
// 0.0, 1.0, 1e-05, 1e+16, inf, nan.
func PyFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	// Go's shortest 'e' form gives the digits and the exponent.
	e := strconv.FormatFloat(x, 'e', -1, 64) // e.g. "-1.2345e+02"
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	if x == 0 {
		return sign + "0.0"
	}
	decpt := exp + 1 // digits are 0.d1d2... × 10^decpt
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		ex := strconv.Itoa(exp)
		if len(ex) < 2 {
			ex = "0" + ex
		}
		return sign + m + "e" + es + ex
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}
