package numeral

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Arch is the shape of the network: a stack of 3×3 convolutions (ReLU,
// optionally followed by 2×2 max pooling), one hidden dense layer and a
// softmax over the classes. It is stored in the model file.
type Arch struct {
	Size     int    `json:"size"`     // input side in pixels
	Channels int    `json:"channels"` // 3 = colour, 1 = gray
	Convs    []Conv `json:"convs"`
	Hidden   int    `json:"hidden"` // width of the hidden dense layer
	// Polar samples the view in polar coordinates about the die's centre
	// (Size/2 radii by 2·Size angles) instead of a Size×Size square: a
	// turn of the die is then a shift along the angle axis, which the
	// convolutions (wrapping around that axis) and a maximum over it at
	// the end make no difference to. The net no longer needs to learn every
	// angle of every face from examples.
	Polar bool `json:"polar,omitempty"`
	// Norm, when above 0, normalises each conv's output per crop in groups
	// of Norm channels (group normalisation, with a learnt gain and offset
	// per channel) before the ReLU; unlike batch normalisation it needs no
	// batch, so the net still learns one crop at a time and reads the same
	// way. Off by default: on burksbuilds it made no clear difference
	// (precision 0.996 recall 0.961 with groups of 4, 0.998 and 0.957
	// without, at 150,000 views).
	Norm    int `json:"norm,omitempty"`
	Classes int `json:"classes"` // set by Train from the samples
}

// Conv is one 3×3 convolution layer of an Arch.
type Conv struct {
	Out  int  `json:"out"`  // output channels
	Pool bool `json:"pool"` // 2×2 max pooling after the ReLU
}

// DefaultArch is a polar net of about 3.4 million multiply-adds per look:
// 16 radii by 64 angles in colour, 16-32-64-64 channels, 128 hidden units.
// Polar because dice land at any angle: on burksbuilds (one photo per
// face) it learnt about four times faster than a 40×40 square net of the
// same cost. Colour is kept because a set's kinds usually differ in colour.
func DefaultArch() Arch {
	return Arch{
		Size:     32,
		Channels: 3,
		Convs:    []Conv{{16, true}, {32, true}, {64, true}, {64, false}},
		Hidden:   128,
		Polar:    true,
	}
}

// Limits that keep a model file from asking for absurd allocations.
const (
	maxSize     = 128
	maxLayers   = 8
	maxWidth    = 512
	maxHidden   = 4096
	maxClasses  = 1024
	maxParams   = 16 << 20
	maxCol      = 4 << 20 // floats in one layer's im2col or activation
	minSpatial  = 1
	maxChannels = 3
)

type convLayer struct {
	cin, cout  int
	h, w       int // input (= conv output) size
	oh, ow     int // after pooling
	pool       bool
	circ       bool // the width axis wraps around (polar angle)
	ld         int  // row stride of the im2col matrix (colStride)
	wOff, bOff int
	group      int // channels per norm group; 0: no norm
	gOff, hOff int // norm gain and offset, one per output channel
}

type denseLayer struct {
	in, out    int
	relu       bool
	wOff, bOff int
}

// net is an Arch laid out over one flat parameter vector, so that the
// optimiser and the gradient reduction are single loops.
type net struct {
	arch    Arch
	convs   []convLayer
	dense   []denseLayer
	nParams int
	inLen   int
	lastW   int // polar: the angle cells the last conv's output has
}

// inShape is the net's input height and width.
func (a Arch) inShape() (h, w int) {
	if a.Polar {
		return a.Size / 2, 2 * a.Size
	}
	return a.Size, a.Size
}

func (a Arch) validate() error {
	switch {
	case a.Size < 8 || a.Size > maxSize:
		return fmt.Errorf("size %d out of range 8..%d", a.Size, maxSize)
	case a.Channels != 1 && a.Channels != 3:
		return fmt.Errorf("channels %d, want 1 or 3", a.Channels)
	case len(a.Convs) == 0 || len(a.Convs) > maxLayers:
		return fmt.Errorf("%d conv layers, want 1..%d", len(a.Convs), maxLayers)
	case a.Hidden < 1 || a.Hidden > maxHidden:
		return fmt.Errorf("hidden %d out of range 1..%d", a.Hidden, maxHidden)
	case a.Classes < 2 || a.Classes > maxClasses:
		return fmt.Errorf("classes %d out of range 2..%d", a.Classes, maxClasses)
	case a.Polar && a.Size%2 != 0:
		return fmt.Errorf("polar size %d is odd", a.Size)
	case a.Norm < 0 || a.Norm > maxWidth:
		return fmt.Errorf("norm group %d out of range 0..%d", a.Norm, maxWidth)
	}
	for i, c := range a.Convs {
		if c.Out < 1 || c.Out > maxWidth {
			return fmt.Errorf("conv %d: %d channels out of range 1..%d", i, c.Out, maxWidth)
		}
		if a.Norm > 0 && c.Out%a.Norm != 0 {
			return fmt.Errorf("conv %d: %d channels do not split into norm groups of %d", i, c.Out, a.Norm)
		}
	}
	return nil
}

func newNet(a Arch) (*net, error) {
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("numeral: architecture: %w", err)
	}
	n := &net{arch: a, inLen: a.Channels * a.Size * a.Size}
	cin := a.Channels
	h, w := a.inShape()
	off := 0
	for i, c := range a.Convs {
		l := convLayer{cin: cin, cout: c.Out, h: h, w: w, oh: h, ow: w, pool: c.Pool, group: a.Norm, circ: a.Polar, ld: colStride(h * w)}
		if c.Pool {
			if l.circ && w%2 != 0 {
				// Pooling would drop an angle cell and break the wrap.
				return nil, fmt.Errorf("numeral: architecture: conv %d pools %d angle cells, an odd number", i, w)
			}
			l.oh, l.ow = h/2, w/2
		}
		if l.oh < minSpatial || l.ow < minSpatial {
			return nil, fmt.Errorf("numeral: architecture: conv %d pools %dx%d to nothing", i, h, w)
		}
		if cin*9*l.ld > maxCol || c.Out*h*w > maxCol {
			return nil, fmt.Errorf("numeral: architecture: conv %d needs too much memory", i)
		}
		l.wOff = off
		off += c.Out * cin * 9
		l.bOff = off
		off += c.Out
		if l.group > 0 {
			l.gOff = off
			off += c.Out
			l.hOff = off
			off += c.Out
		}
		n.convs = append(n.convs, l)
		cin, h, w = c.Out, l.oh, l.ow
	}
	flat := cin * h * w
	if a.Polar {
		flat = cin * h // the maximum over the angle of each channel and radius
		n.lastW = w
	}
	for _, d := range []denseLayer{{in: flat, out: a.Hidden, relu: true}, {in: a.Hidden, out: a.Classes}} {
		d.wOff = off
		off += d.in * d.out
		d.bOff = off
		off += d.out
		n.dense = append(n.dense, d)
	}
	if off > maxParams {
		return nil, fmt.Errorf("numeral: architecture: %d parameters, limit %d", off, maxParams)
	}
	n.nParams = off
	return n, nil
}

// macs is the multiply-add count of one forward pass.
func (n *net) macs() int {
	t := 0
	for _, l := range n.convs {
		t += l.cout * l.cin * 9 * l.h * l.w
	}
	for _, d := range n.dense {
		t += d.in * d.out
	}
	return t
}

// initParams draws He-normal weights and zero biases.
func (n *net) initParams(r *rand.Rand) []float32 {
	p := make([]float32, n.nParams)
	for _, l := range n.convs {
		std := math.Sqrt(2 / float64(l.cin*9))
		for i := range l.cout * l.cin * 9 {
			p[l.wOff+i] = float32(r.NormFloat64() * std)
		}
		if l.group > 0 {
			for i := range l.cout {
				p[l.gOff+i] = 1
			}
		}
	}
	for k, d := range n.dense {
		std := math.Sqrt(2 / float64(d.in))
		if k == len(n.dense)-1 {
			std = math.Sqrt(1 / float64(d.in))
		}
		for i := range d.in * d.out {
			p[d.wOff+i] = float32(r.NormFloat64() * std)
		}
	}
	return p
}

// work holds one sample's activations and gradients; one per goroutine.
type work struct {
	in    []float32
	col   [][]float32 // im2col of each conv's input
	act   [][]float32 // each conv's output after ReLU, before pooling
	out   [][]float32 // each conv's output after pooling (= act without pooling)
	arg   [][]int32   // argmax of each pooled cell
	tArg  []int32     // polar: where along the angle each maximum came from
	xhat  [][]float32 // each normed conv's output, normalised (before gain and offset)
	istd  [][]float32 // 1/σ of each norm group
	dense [][]float32 // input of each dense layer, then the logits
	// backward
	dOut  []float32
	dAct  []float32
	dCol  []float32
	gemm  []float32 // scratch of gemmNT
	dIn   []float32
	dVec  [2][]float32
	probs []float32
	sum   []float32 // Classify's tallies over its looks
}

func (n *net) newWork() *work {
	w := &work{in: make([]float32, n.inLen)}
	maxAct, maxCol, maxGemm := 0, 0, 0
	for _, l := range n.convs {
		k := l.cin * 9
		hw := l.h * l.w
		w.col = append(w.col, make([]float32, k*l.ld))
		act := make([]float32, l.cout*hw)
		w.act = append(w.act, act)
		if l.group > 0 {
			w.xhat = append(w.xhat, make([]float32, l.cout*hw))
			w.istd = append(w.istd, make([]float32, l.cout/l.group))
		} else {
			w.xhat = append(w.xhat, nil)
			w.istd = append(w.istd, nil)
		}
		if l.pool {
			w.out = append(w.out, make([]float32, l.cout*l.oh*l.ow))
			w.arg = append(w.arg, make([]int32, l.cout*l.oh*l.ow))
		} else {
			w.out = append(w.out, act)
			w.arg = append(w.arg, nil)
		}
		maxAct = max(maxAct, l.cout*hw, l.cin*hw)
		maxCol = max(maxCol, k*hw)
		maxGemm = max(maxGemm, ntScratch(k, hw), l.cout*k)
	}
	for _, d := range n.dense {
		w.dense = append(w.dense, make([]float32, d.in))
	}
	if n.arch.Polar {
		w.tArg = make([]int32, n.dense[0].in)
	}
	w.dense = append(w.dense, make([]float32, n.arch.Classes))
	w.dOut = make([]float32, maxAct)
	w.dAct = make([]float32, maxAct)
	w.dIn = make([]float32, maxAct)
	w.dCol = make([]float32, maxCol)
	w.gemm = make([]float32, maxGemm)
	maxVec := 0
	for _, d := range n.dense {
		maxVec = max(maxVec, d.in, d.out)
	}
	w.dVec = [2][]float32{make([]float32, maxVec), make([]float32, maxVec)}
	w.probs = make([]float32, n.arch.Classes)
	return w
}

// forward runs w.in through the net and returns the logits (owned by w).
func (n *net) forward(p []float32, w *work) []float32 {
	x := w.in
	for i, l := range n.convs {
		hw := l.h * l.w
		k := l.cin * 9
		im2col(x, l.cin, l.h, l.w, l.ld, l.circ, w.col[i])
		act := w.act[i]
		for o := 0; o < l.cout; o++ {
			b := p[l.bOff+o]
			row := act[o*hw : o*hw+hw]
			for j := range row {
				row[j] = b
			}
		}
		gemmNN(l.cout, hw, k, p[l.wOff:l.wOff+l.cout*k], w.col[i], l.ld, act)
		if l.group > 0 {
			l.normForward(p, act, w.xhat[i], w.istd[i])
		}
		relu(act)
		if l.pool {
			maxPool(act, l.cout, l.h, l.w, w.out[i], w.arg[i])
		}
		x = w.out[i]
	}
	if n.arch.Polar {
		thetaMax(x, n.lastW, w.dense[0], w.tArg)
	} else {
		copy(w.dense[0], x)
	}
	for i, d := range n.dense {
		in, out := w.dense[i], w.dense[i+1]
		if i+1 < len(n.dense) {
			out = out[:d.out]
		}
		wt := p[d.wOff : d.wOff+d.in*d.out]
		for o := 0; o < d.out; o++ {
			out[o] = p[d.bOff+o] + dot(in, wt[o*d.in:o*d.in+d.in])
		}
		if d.relu {
			relu(out)
		}
	}
	return w.dense[len(n.dense)]
}

// transposeWeights writes into pt, at each conv layer's offset in p, the
// transpose of its weights (cin·9 rows of cout) for every layer but the
// first, which backward needs no input gradient for. Training does this
// once a step, for all the step's views (each view used to transpose
// them anew).
func (n *net) transposeWeights(p, pt []float32) {
	for _, l := range n.convs[1:] {
		k := l.cin * 9
		transpose(pt[l.wOff:l.wOff+k*l.cout], p[l.wOff:l.wOff+l.cout*k], l.cout, k, k, l.cout)
	}
}

// backward adds to g the gradient of the loss whose gradient with respect
// to the logits is dLogits, for the activations left in w by forward. pt
// is p's conv weights transposed (transposeWeights).
func (n *net) backward(p, pt, g []float32, w *work, dLogits []float32) {
	cur := 0 // which of w.dVec holds dy
	dy := w.dVec[cur][:len(dLogits)]
	copy(dy, dLogits)
	for i := len(n.dense) - 1; i >= 0; i-- {
		d := n.dense[i]
		in, out := w.dense[i], w.dense[i+1]
		if d.relu {
			for o := 0; o < d.out; o++ {
				if out[o] <= 0 {
					dy[o] = 0
				}
			}
		}
		gw := g[d.wOff : d.wOff+d.in*d.out]
		for o := 0; o < d.out; o++ {
			g[d.bOff+o] += dy[o]
			if dy[o] != 0 {
				axpy(dy[o], in, gw[o*d.in:o*d.in+d.in])
			}
		}
		cur = 1 - cur
		dx := w.dVec[cur][:d.in]
		clear(dx)
		wt := p[d.wOff : d.wOff+d.in*d.out]
		for o := 0; o < d.out; o++ {
			if dy[o] != 0 {
				axpy(dy[o], wt[o*d.in:o*d.in+d.in], dx)
			}
		}
		dy = dx
	}
	// dy is now the gradient of the last conv block's (pooled) output, or
	// of its maxima over the angle.
	last := n.convs[len(n.convs)-1]
	dOut := w.dOut[:last.cout*last.oh*last.ow]
	if n.arch.Polar {
		clear(dOut)
		for k, a := range w.tArg {
			dOut[a] += dy[k]
		}
	} else {
		copy(dOut, dy)
	}
	for i := len(n.convs) - 1; i >= 0; i-- {
		l := n.convs[i]
		hw := l.h * l.w
		k := l.cin * 9
		dAct := w.dAct[:l.cout*hw]
		if l.pool {
			clear(dAct)
			for j, a := range w.arg[i] {
				dAct[a] += dOut[j]
			}
		} else {
			copy(dAct, dOut[:l.cout*hw])
		}
		act := w.act[i]
		for j, v := range act {
			if v <= 0 {
				dAct[j] = 0
			}
		}
		if l.group > 0 {
			l.normBackward(p, g, dAct, w.xhat[i], w.istd[i])
		}
		for o := 0; o < l.cout; o++ {
			var s float32
			for _, v := range dAct[o*hw : o*hw+hw] {
				s += v
			}
			g[l.bOff+o] += s
		}
		gemmNT(l.cout, k, hw, dAct, w.col[i], l.ld, g[l.wOff:l.wOff+l.cout*k], w.gemm)
		if i == 0 {
			break // no need for the input's gradient
		}
		dCol := w.dCol[:k*hw]
		clear(dCol)
		gemmNN(k, hw, l.cout, pt[l.wOff:l.wOff+k*l.cout], dAct, hw, dCol) // dCol += Wᵀ·dAct
		dIn := w.dIn[:l.cin*hw]
		col2im(dCol, l.cin, l.h, l.w, l.circ, dIn)
		dOut = w.dOut[:len(dIn)]
		copy(dOut, dIn)
	}
}

// normEps keeps the normalisation finite on a flat group.
const normEps = 1e-5

// normForward normalises x (the conv's output, cout planes) per group to
// zero mean and unit variance, keeping the normalised values in xhat, then
// applies each channel's gain and offset.
func (l *convLayer) normForward(p, x, xhat, istd []float32) {
	n := l.group * l.h * l.w
	for g := range istd {
		seg := x[g*n : g*n+n]
		var s, s2 float64
		for _, v := range seg {
			s += float64(v)
			s2 += float64(v) * float64(v)
		}
		mean := s / float64(n)
		v := max(0, s2/float64(n)-mean*mean)
		is := float32(1 / math.Sqrt(v+normEps))
		istd[g] = is
		m := float32(mean)
		xh := xhat[g*n : g*n+n]
		for i, v := range seg {
			xh[i] = (v - m) * is
		}
	}
	hw := l.h * l.w
	for c := 0; c < l.cout; c++ {
		gain, off := p[l.gOff+c], p[l.hOff+c]
		xh := xhat[c*hw : c*hw+hw]
		out := x[c*hw : c*hw+hw]
		for i, v := range xh {
			out[i] = gain*v + off
		}
	}
}

// normBackward turns dy, the gradient of the norm's output, into that of
// its input in place, and adds the gain and offset gradients to g.
func (l *convLayer) normBackward(p, g, dy, xhat, istd []float32) {
	hw := l.h * l.w
	for c := 0; c < l.cout; c++ {
		d := dy[c*hw : c*hw+hw]
		xh := xhat[c*hw : c*hw+hw]
		var sg, sh float32
		for i, v := range d {
			sg += v * xh[i]
			sh += v
		}
		g[l.gOff+c] += sg
		g[l.hOff+c] += sh
		gain := p[l.gOff+c]
		for i := range d {
			d[i] *= gain
		}
	}
	n := l.group * hw
	for gi, is := range istd {
		d := dy[gi*n : gi*n+n]
		xh := xhat[gi*n : gi*n+n]
		var m1, m2 float64
		for i, v := range d {
			m1 += float64(v)
			m2 += float64(v) * float64(xh[i])
		}
		a, b := float32(m1/float64(n)), float32(m2/float64(n))
		for i, v := range d {
			d[i] = is * (v - a - xh[i]*b)
		}
	}
}

func relu(x []float32) {
	for i, v := range x {
		if v <= 0 { // -0 too: maxPool compares bits, and -0's are the largest
			x[i] = 0
		}
	}
}

// thetaMax takes the maximum of each row of x (rows of w cells) into out
// and records where it came from.
func thetaMax(x []float32, w int, out []float32, arg []int32) {
	for k := range out {
		row := x[k*w : k*w+w]
		best, bi := row[0], 0
		for j, v := range row {
			if v > best {
				best, bi = v, j
			}
		}
		out[k] = best
		arg[k] = int32(k*w + bi)
	}
}

// colStride is the row stride of an im2col matrix of hw columns: hw, but
// 16 more when hw is a multiple of 512. Rows a multiple of 2 KB apart
// fall into one or two sets of the cache, and the first layer's 27 rows
// of 1,024 then evict each other between the eight-column blocks of
// gemmNN: padded, that gemm runs twice as fast.
func colStride(hw int) int {
	if hw%512 == 0 {
		return hw + 16
	}
	return hw
}

// im2col lays out the 3×3 neighbourhoods (zero padded; with circ the width
// wraps around) of a c×h×w tensor as rows (ch, ky, kx) of h·w columns,
// ld apart.
//
//go:norace
func im2col(x []float32, c, h, w, ld int, circ bool, col []float32) {
	hw := h * w
	for ch := 0; ch < c; ch++ {
		src := x[ch*hw : ch*hw+hw]
		for ky := 0; ky < 3; ky++ {
			for kx := 0; kx < 3; kx++ {
				dst := col[((ch*3+ky)*3+kx)*ld:][:hw]
				dx := kx - 1
				for y := 0; y < h; y++ {
					row := dst[y*w : y*w+w]
					sy := y + ky - 1
					if sy < 0 || sy >= h {
						clear(row)
						continue
					}
					s := src[sy*w : sy*w+w]
					switch dx {
					case -1:
						row[0] = 0
						if circ {
							row[0] = s[w-1]
						}
						copy(row[1:], s[:w-1])
					case 0:
						copy(row, s)
					case 1:
						copy(row[:w-1], s[1:])
						row[w-1] = 0
						if circ {
							row[w-1] = s[0]
						}
					}
				}
			}
		}
	}
}

// col2im is the adjoint of im2col: it sums the columns back into dx.
// Each element of dx is summed in a register from its nine terms, in the
// columns' order (ky, kx), from +0: the same sums, to the bit, as adding
// one column at a time into a cleared dx, with one store for nine loads
// and stores. Rows beyond the edge read a row of +0, which leaves a sum
// unchanged (a sum begun at +0 is never -0).
//
//go:norace
func col2im(col []float32, c, h, w int, circ bool, dx []float32) {
	hw := h * w
	var zero [2 * maxSize]float32 // the widest row: a polar input's angles
	var rows [9][]float32
	for ch := 0; ch < c; ch++ {
		src := col[ch*9*hw : ch*9*hw+9*hw]
		for sy := 0; sy < h; sy++ {
			for k := range rows {
				// Term (ky, kx) of element j is column k's row
				// sy+1-ky at j+1-kx.
				y := sy + 1 - k/3
				if y < 0 || y >= h {
					rows[k] = zero[:w]
				} else {
					rows[k] = src[k*hw+y*w : k*hw+y*w+w]
				}
			}
			d := dx[ch*hw+sy*w : ch*hw+sy*w+w]
			// The two ends, where kx = 0 or 2 reaches past the row.
			for _, j := range [2]int{0, w - 1} {
				v := float32(0)
				for k, r := range rows {
					v += at(r, j+1-k%3, circ)
				}
				d[j] = v
				if w == 1 {
					break
				}
			}
			if w <= 2 {
				continue
			}
			n := w - 2 // j = 1 … w-2: i = j-1
			di := d[1 : 1+n]
			a0, a1, a2 := rows[0][2:2+n], rows[1][1:1+n], rows[2][:n]
			b0, b1, b2 := rows[3][2:2+n], rows[4][1:1+n], rows[5][:n]
			c0, c1, c2 := rows[6][2:2+n], rows[7][1:1+n], rows[8][:n]
			for i := range di {
				v := float32(0)
				v += a0[i]
				v += a1[i]
				v += a2[i]
				v += b0[i]
				v += b1[i]
				v += b2[i]
				v += c0[i]
				v += c1[i]
				v += c2[i]
				di[i] = v
			}
		}
	}
}

// at is s[j], wrapped around when circ and +0 beyond the ends when not.
func at(s []float32, j int, circ bool) float32 {
	switch {
	case j >= 0 && j < len(s):
		return s[j]
	case !circ:
		return 0
	case j < 0:
		return s[len(s)+j]
	}
	return s[j-len(s)]
}

// maxPool takes the maximum of each 2×2 cell (floor size) and records
// where it came from (the first of equals). x must be a ReLU's output:
// +0 or above.
func maxPool(x []float32, c, h, w int, out []float32, arg []int32) {
	oh, ow := h/2, w/2
	for ch := 0; ch < c; ch++ {
		for y := 0; y < oh; y++ {
			i0 := ch*h*w + 2*y*w
			r0, r1 := x[i0:i0+2*ow], x[i0+w:i0+w+2*ow]
			o := (ch*oh + y) * ow
			for xx := range ow {
				// At +0 and above the bits order as the values do:
				// integer compares, which compile to conditional
				// moves where float compares branch at random.
				best, bi := math.Float32bits(r0[2*xx]), i0+2*xx
				if v := math.Float32bits(r0[2*xx+1]); v > best {
					best, bi = v, i0+2*xx+1
				}
				if v := math.Float32bits(r1[2*xx]); v > best {
					best, bi = v, i0+w+2*xx
				}
				if v := math.Float32bits(r1[2*xx+1]); v > best {
					best, bi = v, i0+w+2*xx+1
				}
				out[o+xx] = math.Float32frombits(best)
				arg[o+xx] = int32(bi)
			}
		}
	}
}

// softmax writes the probabilities of logits/t into probs.
func softmax(logits []float32, t float32, probs []float32) {
	m := float32(math.Inf(-1))
	for _, v := range logits {
		m = max(m, v/t)
	}
	var s float64
	for i, v := range logits {
		e := math.Exp(float64(v/t - m))
		probs[i] = float32(e)
		s += e
	}
	for i := range probs[:len(logits)] {
		probs[i] = float32(float64(probs[i]) / s)
	}
}
