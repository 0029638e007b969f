package numeral

import "testing"

// TestPlainKernelsOnAMD64: a CPU without AVX2 takes the plain loops; they
// must give the same bits as the vector forms.
func TestPlainKernelsOnAMD64(t *testing.T) {
	if !hasAVX2 {
		t.Skip("this CPU has no AVX2: the other tests ran the plain loops")
	}
	defer func() { hasAVX2 = true }()
	hasAVX2 = false
	TestMadd4IsExact(t)
	TestGemmNTIsExact(t)
	TestGemmNNIsExact(t)
	TestGemmMatchesNaive(t)
}
