package numeral

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseLabels(t *testing.T) {
	in := "file,die,face,x,y,w,h\n" +
		"a.jpg,d6,3,10,20,30,40\n" +
		"b.jpg,D10,0,,,,\n" +
		"c.jpg,d100,90, 1 ,2,3,4\n"
	got, err := ParseLabels(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Label{
		{Line: 2, File: "a.jpg", Die: "d6", Face: 3, Box: image.Rect(10, 20, 40, 60), HasBox: true},
		{Line: 3, File: "b.jpg", Die: "d10", Face: 0},
		{Line: 4, File: "c.jpg", Die: "d100", Face: 90, Box: image.Rect(1, 2, 4, 6), HasBox: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d labels, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("label %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseLabelsErrors(t *testing.T) {
	const head = "file,die,face,x,y,w,h\n"
	for _, tc := range []struct{ in, want string }{
		{"", "empty file"},
		{"file,die\n", "line 1: header"},
		{head + "a.jpg,d7,1,,,,\n", `line 2: die: "d7"`},
		{head + "a.jpg,d6,1,,,,\nb.jpg,d6,7,,,,\n", "line 3: face: 7 is not a face of a d6"},
		{head + "a.jpg,d10,10,,,,\n", "line 2: face: 10"},
		{head + "a.jpg,d100,15,,,,\n", "line 2: face: 15"},
		{head + "a.jpg,d20,x,,,,\n", `line 2: face: "x"`},
		{head + "a.jpg,d20,1,1,2,,\n", "line 2: box: give all"},
		{head + "a.jpg,d20,1,1,2,0,5\n", "line 2: box: zero"},
		{head + "a.jpg,d20,1,-1,2,3,5\n", `line 2: x: "-1"`},
		{head + ",d20,1,,,,\n", "line 2: file: empty"},
		{head + "a.jpg,d20,1\n", "line 2: 3 fields"},
	} {
		_, err := ParseLabels(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseLabels(%q) error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseLabels(f *testing.F) {
	f.Add("file,die,face,x,y,w,h\na.jpg,d6,3,10,20,30,40\nb.jpg,d10,0,,,,\n")
	f.Add("file,die,face,x,y,w,h\n\"a,b\",d100,90,1,2,3,4\n")
	f.Add("file,die,face,x,y,w,h\na,d20,21,,,,")
	f.Fuzz(func(t *testing.T, in string) {
		labels, err := ParseLabels(strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "numeral: labels") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		for _, l := range labels {
			if !ValidFace(l.Die, l.Face) || l.File == "" || (l.HasBox && l.Box.Empty()) {
				t.Fatalf("accepted bad label %+v", l)
			}
		}
	})
}

func TestLoadDataset(t *testing.T) {
	dir := t.TempDir()
	// A 300×200 dark photo with two toy dice, and a photo that is a crop.
	photo := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for i := range photo.Pix {
		photo.Pix[i] = 15
		if i%4 == 3 {
			photo.Pix[i] = 255
		}
	}
	for _, d := range []struct{ x, y int }{{40, 40}, {200, 120}} {
		for y := d.y; y < d.y+40; y++ {
			for x := d.x; x < d.x+40; x++ {
				photo.Set(x, y, color.RGBA{200, 50, 50, 255})
			}
		}
	}
	write := func(name string, img image.Image) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
	}
	write("p.png", photo)
	write("c.png", pipCrop(3, 0, 60, green, nil))
	labels := "file,die,face,x,y,w,h\np.png,d6,2,40,40,40,40\np.png,d6,5,200,120,40,40\nc.png,d4,3,,,,\n"
	if err := os.WriteFile(filepath.Join(dir, "labels.csv"), []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadDataset(dir, DatasetOptions{Background: 2})
	if err != nil {
		t.Fatal(err)
	}
	var dice, bg int
	for _, x := range s {
		if x.Die == "" {
			bg++
			continue
		}
		dice++
		b := x.Img.Bounds()
		switch x.Die {
		case "d6":
			if b.Dx() != 60 || b.Dy() != 60 {
				t.Errorf("%s crop is %v, want 60×60 (box 40 plus margins)", x.Name, b)
			}
			// The die's red fills the middle of its crop.
			if r, g, _ := rgbAt(x.Img, b.Min.X+30, b.Min.Y+30); r < 150 || g > 100 {
				t.Errorf("%s: centre of crop is not the die", x.Name)
			}
		case "d4":
			if b.Dx() != 60 {
				t.Errorf("whole-photo sample is %v, want the 60×60 photo", b)
			}
		}
	}
	if dice != 3 || bg < 1 || bg > 2 {
		t.Errorf("got %d dice and %d background crops, want 3 and 1–2", dice, bg)
	}
	for _, x := range s {
		if x.Die != "" {
			continue
		}
		b := x.Img.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for xx := b.Min.X; xx < b.Max.X; xx++ {
				if r, _, _ := rgbAt(x.Img, xx, y); r > 100 {
					t.Fatalf("background crop %s shows a die", x.Name)
				}
			}
		}
	}

	// Errors name the line.
	os.WriteFile(filepath.Join(dir, "labels.csv"), []byte("file,die,face,x,y,w,h\nmissing.png,d6,1,,,,\n"), 0o644)
	if _, err := LoadDataset(dir, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("missing photo: error %v, want one naming line 2", err)
	}
	os.WriteFile(filepath.Join(dir, "labels.csv"), []byte("file,die,face,x,y,w,h\np.png,d6,1,900,900,10,10\n"), 0o644)
	if _, err := LoadDataset(dir, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("box outside photo: error %v", err)
	}

	// With Skip, such photos are reported and left out: a camera's corrupt
	// frame (a JPEG cut short), a missing photo and a box outside one.
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, photo, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cut.jpg"), jb.Bytes()[:jb.Len()/2], 0o644)
	os.WriteFile(filepath.Join(dir, "labels.csv"), []byte("file,die,face,x,y,w,h\ncut.jpg,d6,4,,,,\nmissing.png,d6,1,,,,\n"+
		"p.png,d6,1,900,900,10,10\np.png,d6,2,40,40,40,40\nc.png,d4,3,,,,\n"), 0o644)
	var skipped []string
	s, err = LoadDataset(dir, DatasetOptions{Background: -1, Skip: func(err error) { skipped = append(skipped, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].Die != "d4" || len(skipped) != 3 {
		t.Fatalf("with Skip: %d crops, skipped %q; want the d4 crop alone and 3 photos skipped", len(s), skipped)
	}
	for i, want := range []string{"line 2", "line 3", "line 4"} {
		if !strings.Contains(skipped[i], want) {
			t.Errorf("skipped[%d] = %q, want it to name %s", i, skipped[i], want)
		}
	}
	os.WriteFile(filepath.Join(dir, "labels.csv"), []byte("file,die,face,x,y,w,h\ncut.jpg,d6,4,,,,\n"), 0o644)
	if _, err := LoadDataset(dir, DatasetOptions{Skip: func(error) {}}); err == nil || !strings.Contains(err.Error(), "no labelled photo") {
		t.Errorf("every photo skipped: error %v", err)
	}
}

func TestCropDieCentresTheBox(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 80))
	img.Set(50, 40, color.RGBA{255, 0, 0, 255})
	// The box 40..61 × 30..51 has its centre at the red pixel.
	c := CropDie(img, image.Rect(40, 30, 61, 51))
	if c.Bounds().Dx() != 32 || c.Bounds().Dy() != 32 {
		t.Fatalf("crop %v, want 32×32 (21 × 1.5)", c.Bounds())
	}
	if r, _, _ := rgbAt(c, 16, 16); r != 255 {
		t.Errorf("crop centre is not the box centre")
	}
	// A box at the corner repeats the edge instead of going black.
	img.Set(0, 0, color.RGBA{0, 0, 255, 255})
	c = CropDie(img, image.Rect(0, 0, 10, 10))
	if _, _, b := rgbAt(c, 0, 0); b != 255 {
		t.Errorf("outside pixels do not repeat the edge")
	}
}

// TestLocate: rows without a box get the boxes the locator finds, in the
// photo's own coordinates; rows it cannot place surely are left out.
func TestLocate(t *testing.T) {
	img := image.NewRGBA(image.Rect(100, 50, 740, 530)) // a photo not at the origin
	boxed := Label{Line: 2, File: "a.jpg", Die: "d8", Face: 3, Box: image.Rect(1, 2, 30, 30), HasBox: true}
	bare := func(line, face int) Label { return Label{Line: line, File: "a.jpg", Die: "d20", Face: face} }
	one := func(_ image.Image, boxed []image.Rectangle, _ int) []image.Rectangle {
		// The labelled die is handed over in the photo's coordinates.
		if len(boxed) != 1 || boxed[0] != image.Rect(101, 52, 130, 80) {
			t.Errorf("boxed %v, want the d8's box at the photo's origin", boxed)
		}
		return []image.Rectangle{image.Rect(200, 100, 260, 160)}
	}
	two := func(image.Image, []image.Rectangle, int) []image.Rectangle {
		return []image.Rectangle{image.Rect(200, 100, 260, 160), image.Rect(300, 100, 360, 160)}
	}
	cases := []struct {
		name string
		rows []Label
		find func(image.Image, []image.Rectangle, int) []image.Rectangle
		want []int // lines kept, in order
	}{
		{"no locator", []Label{boxed, bare(3, 7)}, nil, []int{2, 3}},
		{"one placed", []Label{boxed, bare(3, 7)}, one, []int{2, 3}},
		{"wrong count", []Label{bare(3, 7)}, two, nil},
		{"two alike", []Label{bare(3, 7), bare(4, 7)}, two, []int{3, 4}},
		{"two different", []Label{bare(3, 7), bare(4, 8)}, two, nil},
	}
	for _, c := range cases {
		got := locate(img, c.rows, c.find)
		var lines []int
		for _, l := range got {
			lines = append(lines, l.Line)
			if c.find != nil && l.Line != 2 && (!l.HasBox || l.Box.Min != image.Pt(100, 50) && l.Box.Min != image.Pt(200, 50)) {
				t.Errorf("%s: line %d box %v, want the found box less the photo's origin", c.name, l.Line, l.Box)
			}
		}
		if !slices.Equal(lines, c.want) {
			t.Errorf("%s: kept lines %v, want %v", c.name, lines, c.want)
		}
	}
}
