package render

import (
	"image"
	"testing"

	"github.com/towerd/towerd/rules"
)

// BenchmarkRender measures one 640x480 tray photo with eight mixed dice.
func BenchmarkRender(b *testing.B) {
	s := RandomScene(1, []rules.Die{rules.D4, rules.D6, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100}, Options{})
	img := image.NewRGBA(image.Rect(0, 0, s.Width, s.Height))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RenderInto(img, s); err != nil {
			b.Fatal(err)
		}
	}
}
