package render

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/towerd/towerd/rules"
)

// TestDump writes sample frames for a person to look at when
// TOWERD_RENDER_DUMP names a directory.
func TestDump(t *testing.T) {
	dir := os.Getenv("TOWERD_RENDER_DUMP")
	if dir == "" {
		t.Skip("set TOWERD_RENDER_DUMP=DIR to write sample frames")
	}
	sets := [][]rules.Die{
		{rules.D4, rules.D6, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100},
		{rules.D20, rules.D20},
		{rules.D6, rules.D6, rules.D6, rules.D6, rules.D6},
	}
	for i, kinds := range sets {
		for seed := uint64(1); seed <= 2; seed++ {
			s := RandomScene(seed, kinds, Options{})
			img, truth := MustRender(s)
			name := filepath.Join(dir, fmt.Sprintf("set%d-seed%d.png", i, seed))
			f, err := os.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := png.Encode(f, img); err != nil {
				t.Fatal(err)
			}
			f.Close()
			t.Logf("%s: %+v", name, truth)
		}
	}
}
