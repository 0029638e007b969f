package numeral

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"

	"github.com/towerd/towerd/internal/cputime"
)

// benchCrop is a synthetic 150-pixel die crop: a bright disc on black.
func benchCrop() image.Image {
	img := image.NewRGBA(image.Rect(0, 0, 150, 150))
	for y := 0; y < 150; y++ {
		for x := 0; x < 150; x++ {
			dx, dy := x-75, y-75
			c := color.RGBA{10, 10, 12, 255}
			if dx*dx+dy*dy < 50*50 {
				c = color.RGBA{200, uint8(40 + x), uint8(y), 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

func benchModel(b *testing.B) *Model {
	a := DefaultArch()
	a.Classes = 71
	nt, err := newNet(a)
	if err != nil {
		b.Fatal(err)
	}
	m := &Model{arch: a, net: nt, params: nt.initParams(rand.New(rand.NewPCG(1, 1))), view: 0.85, temp: 1}
	m.classes = []class{{}}
	for i := 1; i <= 70; i++ {
		m.classes = append(m.classes, class{"d100", 0})
	}
	return m
}

// BenchmarkClassify is the cost of reading one die crop (single core).
func BenchmarkClassify(b *testing.B) {
	m := benchModel(b)
	crop := benchCrop()
	b.ReportMetric(float64(m.net.macs())/1e6, "MMAC")
	t0 := cputime.Now()
	for b.Loop() {
		m.Classify(crop, nil)
	}
	cputime.Report(b, t0)
}

// BenchmarkClassifyLens is the cost of reading one die crop through a
// lens, eight looks (single core).
func BenchmarkClassifyLens(b *testing.B) {
	m := benchModel(b)
	m.lens = Lens{DY: -0.27, Squash: 0.65}
	crop := benchCrop()
	t0 := cputime.Now()
	for b.Loop() {
		m.Classify(crop, nil)
	}
	cputime.Report(b, t0)
}

// learner is a trainer of net n with the default options, its conv
// weights transposed for parameters p (as a training step has them, once
// for all its views), and one shard to learn in.
func learner(tb testing.TB, n *net, p []float32) (*trainer, *shardState) {
	o := TrainOptions{Arch: n.arch}
	if err := o.defaults(1); err != nil {
		tb.Fatal(err)
	}
	classes := n.arch.Classes
	tr := &trainer{net: n, opts: &o, nClasses: classes, pt: make([]float32, n.nParams)}
	n.transposeWeights(p, tr.pt)
	return tr, &shardState{w: n.newWork(), grad: make([]float32, n.nParams), target: make([]float32, classes)}
}

// toyNet is the toy net with classes outputs and fresh parameters.
func toyNet(tb testing.TB, classes int) (*net, []float32) {
	a := toyArch
	a.Classes = classes
	nt, err := newNet(a)
	if err != nil {
		tb.Fatal(err)
	}
	return nt, nt.initParams(rand.New(rand.NewPCG(1, 1)))
}

// BenchmarkTrainStep is the cost of one augmented view forward and back.
func BenchmarkTrainStep(b *testing.B) {
	m := benchModel(b)
	c := toCanon(benchCrop(), maxSide(m.arch.Size, m.view))
	tr, s := learner(b, m.net, m.params)
	r := rand.New(rand.NewPCG(1, 2))
	t0 := cputime.Now()
	for b.Loop() {
		tr.learn(m.params, s, item{c: c, class: 3}, r)
	}
	cputime.Report(b, t0)
}

func BenchmarkToyLearn(b *testing.B) {
	nt, p := toyNet(b, 8)
	c := toCanon(benchCrop(), maxSide(toyArch.Size, 0.85))
	tr, s := learner(b, nt, p)
	r := rand.New(rand.NewPCG(1, 2))
	t0 := cputime.Now()
	for b.Loop() {
		tr.learn(p, s, item{c: c, class: 3}, r)
	}
	cputime.Report(b, t0)
}

func BenchmarkToyAugment(b *testing.B) {
	c := toCanon(benchCrop(), maxSide(24, 0.85))
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]float32, 3*24*24)
	t0 := cputime.Now()
	for b.Loop() {
		augment(c, Arch{Size: 24, Channels: 3}, 0.85, Lens{}, 180, 1.2, r, out)
	}
	cputime.Report(b, t0)
}
