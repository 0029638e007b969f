package camera

import (
	"image"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDownscaleSWARMatchesBytes: the two-pixels-a-load path gives exactly
// the byte-by-byte means, at the extremes (all 255) and on random frames,
// for every even scale it takes.
func TestDownscaleSWARMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, scale := range []int{2, 4, 6, 8, maxSWARScale} {
		for _, fill := range []string{"white", "random"} {
			img := image.NewRGBA(image.Rect(0, 0, 257, 131))
			for i := range img.Pix {
				img.Pix[i] = 255
				if fill == "random" {
					img.Pix[i] = uint8(rng.Uint32())
				}
			}
			d := NewDetector(SettleConfig{Scale: scale, Region: image.Rect(3, 5, 250, 129)})
			d.setup(img.Rect)
			want, got := make([]uint8, d.w*d.h), make([]uint8, d.w*d.h)
			d.downscaleBytes(img, want)
			d.downscaleSWAR(img, got)
			if !slices.Equal(got, want) {
				t.Fatalf("scale %d, %s: SWAR %v, bytes %v", scale, fill, got[:min(8, len(got))], want[:min(8, len(want))])
			}
			if fill == "white" && want[0] != 255 {
				t.Fatalf("scale %d: white frame downscaled to %d", scale, want[0])
			}
		}
	}
}

// BenchmarkDownscale compares the two paths on a 640x480 frame (-cpu 1).
func BenchmarkDownscale(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 640, 480))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	d := NewDetector(SettleConfig{})
	d.setup(img.Rect)
	out := make([]uint8, d.w*d.h)
	for _, p := range []struct {
		name string
		f    func(*image.RGBA, []uint8)
	}{{"bytes", d.downscaleBytes}, {"swar", d.downscaleSWAR}} {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				p.f(img, out)
			}
		})
	}
}
