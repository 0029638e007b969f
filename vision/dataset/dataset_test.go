package dataset

import (
	"bytes"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseLabels(t *testing.T) {
	in := "file,die,face,x,y,w,h\n" +
		"images/a.jpg,d6,3,10,20,30,40\n" +
		"images/a.jpg,d10,0,,,,\n" +
		"b.jpg,D100,90, 1, 2, 3, 4\n" +
		"c.jpg,d20,20,10.4,20.5,30.2,39.6\n"
	ls, err := ParseLabels(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 4 {
		t.Fatalf("got %d labels, want 4", len(ls))
	}
	// A box in fractions of a pixel has its edges rounded: 10.4 to 40.6,
	// 20.5 to 60.1.
	if l := ls[3]; !l.HasBox || l.Box != image.Rect(10, 21, 41, 60) {
		t.Errorf("row 4 = %+v, want box (10,21)-(41,60)", l)
	}
	if l := ls[0]; l.File != "images/a.jpg" || l.Die != "d6" || l.Face != 3 || !l.HasBox || l.Box != image.Rect(10, 20, 40, 60) || l.Line != 2 {
		t.Errorf("row 1 = %+v", l)
	}
	if l := ls[1]; l.HasBox || l.Die != "d10" || l.Face != 0 {
		t.Errorf("row 2 = %+v", l)
	}
	if l := ls[2]; l.Die != "d100" || l.Face != 90 || l.Box != image.Rect(1, 2, 4, 6) {
		t.Errorf("row 3 = %+v", l)
	}
}

func TestParseLabelsErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no labelled dice"},
		{"file,die,face\n", "line 1: header"},
		{"file,die,face,x,y,w,h\n", "no labelled dice"},
		{"file,die,face,x,y,w,h\na,d7,1,,,,\n", "line 2: die"},
		{"file,die,face,x,y,w,h\na,d6,7,,,,\n", "line 2: face: 7"},
		{"file,die,face,x,y,w,h\na,d10,10,,,,\n", "face: 10 is not a face of a d10"},
		{"file,die,face,x,y,w,h\na,d100,15,,,,\n", "face: 15"},
		{"file,die,face,x,y,w,h\na,d6,x,,,,\n", "face: \"x\""},
		{"file,die,face,x,y,w,h\na,d6,1,1,2,,\n", "give all four or none"},
		{"file,die,face,x,y,w,h\na,d6,1,1,2,q,4\n", "line 2: w: \"q\" is not a number"},
		{"file,die,face,x,y,w,h\na,d6,1,1,2,NaN,4\n", "w: \"NaN\" is not a number"},
		{"file,die,face,x,y,w,h\na,d6,1,1,2,Inf,4\n", "w: Inf is out of range"},
		{"file,die,face,x,y,w,h\na,d6,1,1,2,0,4\n", "box must not be empty"},
		{"file,die,face,x,y,w,h\na,d6,1,1,2,0.3,4\n", "box must not be empty"},
		{"file,die,face,x,y,w,h\na,d6,1,-1,2,3,4\n", "x: -1 is out of range"},
		{"file,die,face,x,y,w,h\na,d6,1\n", "line 2: want 7 fields"},
		{"file,die,face,x,y,w,h\n,d6,1,,,,\n", "file: empty"},
		{"file,die,face,x,y,w,h\n../x.jpg,d6,1,,,,\n", "must be relative"},
		{"file,die,face,x,y,w,h\n/x.jpg,d6,1,,,,\n", "must be relative"},
	} {
		_, err := ParseLabels(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseLabels(%q) error = %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func FuzzParseLabels(f *testing.F) {
	f.Add("file,die,face,x,y,w,h\nimages/a.jpg,d6,3,10,20,30,40\n")
	f.Add("file,die,face,x,y,w,h\na,d100,90,,,,\n")
	f.Add("file,die,face,x,y,w,h\na,\"d6\",1,1,1,1,1\n")
	f.Add("file,die,face,x,y,w,h\na,d20,7,0.4,1e3,2.5,0x10\n")
	f.Fuzz(func(t *testing.T, in string) {
		ls, err := ParseLabels(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, l := range ls {
			if !ValidFace(l.Die, l.Face) || l.File == "" || (l.HasBox && l.Box.Empty()) {
				t.Fatalf("accepted bad label %+v", l)
			}
		}
	})
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	csv := "file,die,face,x,y,w,h\nb.jpg,d6,1,,,,\na.jpg,d6,2,,,,\nb.jpg,d6,3,,,,\n"
	if err := os.WriteFile(filepath.Join(dir, "labels.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Files, " ") != "b.jpg a.jpg" || len(s.Labels["b.jpg"]) != 2 {
		t.Errorf("files %v labels %v", s.Files, s.Labels)
	}
	if s.Path("a.jpg") != filepath.Join(dir, "a.jpg") {
		t.Errorf("Path = %s", s.Path("a.jpg"))
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.HasPrefix(err.Error(), "dataset: ") {
		t.Errorf("Load of empty folder: %v", err)
	}
}

func TestLoadRealSets(t *testing.T) {
	for _, name := range []string{"matteop65-d6", "burksbuilds-dice"} {
		dir := filepath.Join("..", "..", "..", "shared", "datasets", name)
		if _, err := os.Stat(dir); err != nil {
			t.Skipf("dataset %s not present beside the repo (%v); skipping", name, err)
		}
		s, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range s.Files {
			n += len(s.Labels[f])
		}
		if n == 0 {
			t.Errorf("%s: no dice", name)
		}
	}
}

func face(n int) *int { return &n }

func TestMatchAndScore(t *testing.T) {
	labels := []Label{
		{Die: "d6", Face: 3, Box: image.Rect(100, 100, 120, 120), HasBox: true},
		{Die: "d6", Face: 5, Box: image.Rect(300, 100, 320, 120), HasBox: true},
		{Die: "d6", Face: 1, Box: image.Rect(500, 100, 520, 120), HasBox: true},
		{Die: "d6", Face: 2, Box: image.Rect(100, 300, 120, 320), HasBox: true},
	}
	answers := []Answer{
		{Die: "d6", Face: face(3), Box: image.Rect(90, 90, 135, 135)},   // right: label centre inside
		{Die: "d6", Face: face(4), Box: image.Rect(295, 95, 330, 130)},  // wrong
		{Die: "d6", Face: nil, Box: image.Rect(490, 95, 530, 130)},      // null
		{Die: "d6", Face: face(6), Box: image.Rect(400, 400, 440, 440)}, // invented with a face
		{Die: "d6", Face: nil, Box: image.Rect(0, 400, 40, 440)},        // invented, null
	}
	s := NewScore()
	pairs := s.Add(labels, answers, 10*time.Millisecond)
	if len(pairs) != 6 {
		t.Fatalf("pairs %v", pairs)
	}
	if s.Right != 1 || s.Wrong != 1 || s.Null != 1 || s.Missed != 1 || s.Invented != 2 || s.InventedAnswered != 1 {
		t.Errorf("score %+v", s)
	}
	if p := s.Precision(); p != 1.0/3 {
		t.Errorf("precision %v, want 1/3 (1 right of 2 answered + 1 invented)", p)
	}
	if r := s.Recall(); r != 0.25 {
		t.Errorf("recall %v", r)
	}
	if s.MsPerPhoto() != 10 {
		t.Errorf("ms %v", s.MsPerPhoto())
	}
	if got := s.Confusion["d6"][5]["4"]; got != 1 {
		t.Errorf("confusion 5→4 = %d", got)
	}
	if got := s.Confusion["d6"][2][ReadMissed]; got != 1 {
		t.Errorf("confusion 2→missed = %d", got)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"precision 0.3333", "recall 0.2500", "d6   5: 4→1", "missed→1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestMatchNearestWins(t *testing.T) {
	// Two answers near one label: the closer one is paired, the other invented.
	labels := []Label{{Die: "d6", Face: 2, Box: image.Rect(100, 100, 110, 130), HasBox: true}}
	answers := []Answer{
		{Die: "d6", Face: face(2), Box: image.Rect(110, 100, 150, 140)},
		{Die: "d6", Face: face(2), Box: image.Rect(85, 95, 125, 135)},
	}
	pairs := Match(labels, answers)
	if len(pairs) != 2 || pairs[0] != (Pair{0, 1}) || pairs[1] != (Pair{-1, 0}) {
		t.Errorf("pairs %v", pairs)
	}
}

func TestMatchBoxless(t *testing.T) {
	labels := []Label{{Die: "d8", Face: 3}, {Die: "d20", Face: 7}}
	answers := []Answer{
		{Die: "d20", Face: face(7), Box: image.Rect(0, 0, 9, 9)},
		{Die: "d8", Face: face(4), Box: image.Rect(50, 0, 59, 9)},
	}
	s := NewScore()
	s.Add(labels, answers, 0)
	if s.Right != 1 || s.Wrong != 1 || s.Invented != 0 || s.Missed != 0 {
		t.Errorf("score %+v", s)
	}
	s.AddError(labels)
	if s.PhotoErrors != 1 || s.Photos != 1 || s.Missed != 2 {
		t.Errorf("after AddError %+v", s)
	}
}

// TestSkew: a d4 set whose 1s are read right 15 times in 20 and other
// faces 20 in 20 skews the 1 to 0.75/0.9375 = 0.8 of a fair share and
// each other face to 1/0.9375; with a face under 20 dice there is none,
// and the report prints it only for kinds that have one.
func TestSkew(t *testing.T) {
	s := NewScore()
	for f := 1; f <= 4; f++ {
		for i := 0; i < 20; i++ {
			box := image.Rect(0, 0, 20, 20)
			l := []Label{{Die: "d4", Face: f, Box: box, HasBox: true}}
			a := []Answer{{Die: "d4", Face: face(f), Box: box}}
			if f == 1 && i < 5 {
				a[0].Face = nil
			}
			s.Add(l, a, time.Millisecond)
		}
	}
	box := image.Rect(0, 0, 20, 20)
	s.Add([]Label{{Die: "d6", Face: 2, Box: box, HasBox: true}}, []Answer{{Die: "d6", Face: face(2), Box: box}}, time.Millisecond)
	sk := s.Skew("d4")
	want := map[int]float64{1: 0.8, 2: 1 / 0.9375, 3: 1 / 0.9375, 4: 1 / 0.9375}
	if len(sk) != 4 {
		t.Fatalf("Skew(d4) = %v", sk)
	}
	for f, w := range want {
		if math.Abs(sk[f]-w) > 1e-9 {
			t.Errorf("Skew(d4)[%d] = %v, want %v", f, sk[f], w)
		}
	}
	if sk := s.Skew("d6"); sk != nil {
		t.Errorf("Skew(d6) with one die = %v, want nil", sk)
	}
	if all := s.Skews(); len(all) != 1 || all["d4"][1] != sk[1] {
		t.Errorf("Skews() = %v, want d4's alone", all)
	}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "re-tumble skew") || !strings.Contains(out, "d4 1×0.800 2×1.067") || strings.Contains(out, "  d6 2×") {
		t.Errorf("report:\n%s", out)
	}
}
