package numeral

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"
)

// TrainOptions tune Train; the zero value trains with the defaults.
type TrainOptions struct {
	// Epochs is the number of passes over the training crops, each with
	// fresh random augmentation; 0 picks one from the number of die crops
	// (about viewBudget views in all, at most 6,000 epochs). With a
	// Deadline it is the most that are run.
	Epochs int
	// Seed makes a run repeatable: the same samples, options and seed give
	// the same model.
	Seed uint64
	// Arch is the network's shape; zero means DefaultArch.
	Arch Arch
	// View is the share of the die's side the network sees around its
	// centre (a tight crop reads small numerals better than a wide one);
	// 0 means 0.6.
	View float64
	// Rotation is the largest rotation, in degrees either way, applied to
	// training crops: 180 (the default) for a top-down tower where dice land
	// at any angle; a camera that sees dice from a fixed side reads better
	// with a small range such as 15, where 6 and 9 stay apart. Negative
	// means none.
	Rotation float64
	// Lens is where a camera fixed at a slant sees the up face (FitLens);
	// the zero Lens looks straight down.
	Lens Lens
	// Zoom is the range of scale applied to the view, as a factor either way
	// (1.2 = from 1/1.2 to 1.2 times); it absorbs loose or tight boxes.
	// 0 means 1.2.
	Zoom float64
	// Validation is the share of each class's crops held back to measure
	// accuracy and calibrate confidence (rounded down per class, so a class
	// with few crops keeps them all); 0 means 0.1, negative none.
	Validation float64
	// Batch is the minibatch size; 0 means 32.
	Batch int
	// LearningRate is Adam's peak step size; 0 means 0.002.
	LearningRate float64
	// Workers is how many goroutines train; 0 means GOMAXPROCS.
	Workers int
	// Context stops training early when done; nil means never.
	Context context.Context
	// Deadline, when set, is when training should be done. After every
	// epoch the epochs still to run are planned from the time the epochs
	// so far took, so that the learning rate's schedule runs to its end
	// by then: at most Epochs, and at least minPlanned (or Epochs, when
	// fewer) however late it is. A model trained to a deadline depends on
	// the machine's speed; the zero Deadline trains exactly Epochs.
	Deadline time.Time
	// now is the clock Deadline is read on; nil means time.Now (tests set
	// it).
	now func() time.Time
	// Progress, when set, is called after every epoch.
	Progress func(Progress)
}

// Progress reports one finished training epoch.
type Progress struct {
	Epoch, Epochs int
	Loss          float64 // mean training loss over the epoch
	Accuracy      float64 // on the epoch's augmented crops
	Elapsed       time.Duration
}

// Stats tells how a model was trained and how well it reads.
type Stats struct {
	Samples    int `json:"samples"`    // die crops used for training
	Background int `json:"background"` // background crops used
	Validation int `json:"validation"` // die crops held back
	Epochs     int `json:"epochs"`     // epochs run
	// EpochLimit is the most epochs training could run (TrainOptions.Epochs);
	// above Epochs when a Deadline left time for fewer.
	EpochLimit  int         `json:"epoch_limit,omitempty"`
	Seconds     float64     `json:"seconds"`     // training time
	Temperature float64     `json:"temperature"` // calibrated softmax temperature
	Kinds       []KindStats `json:"kinds"`
	Held        HeldStats   `json:"held"`
	// Trained is the training die crops read back as Held's are, once
	// trained: one answered as another face was not learnt as labelled
	// (the loss cut left it out, or it was learnt less surely than what
	// it shows), and is likelier labelled wrongly.
	Trained  HeldStats     `json:"trained"`
	Duration time.Duration `json:"-"`
}

// HeldStats is how the held-back die crops read as a reader reads them:
// Classify's looks, any kind the model knows.
type HeldStats struct {
	Read     int `json:"read"`     // held-back die crops read
	Answered int `json:"answered"` // of those, at ≥ DefaultMinConfidence
	Wrong    int `json:"wrong"`    // of those answered, wrongly
	// SurestWrong is the highest confidence of a wrong answer below
	// LabelDoubt (at any confidence); 0 for none.
	SurestWrong float64 `json:"surest_wrong,omitempty"`
	// WrongCrops are the crops answered wrongly at DefaultMinConfidence
	// or more (at most maxWrongListed held back, maxTrainedListed trained
	// on): a wrong label, or a mistake of the model's, for the owner to
	// look at.
	WrongCrops []HeldWrong `json:"wrong_crops,omitempty"`
}

// HeldWrong is a crop (held back, or trained on) answered wrongly.
type HeldWrong struct {
	Name       string  `json:"name"` // Sample.Name
	Die        string  `json:"die"`  // its label
	Face       int     `json:"face"`
	Read       int     `json:"read"`               // the face answered (of Die's kind, or ReadDie's)
	ReadDie    string  `json:"read_die,omitempty"` // the kind answered, when not Die
	Confidence float64 `json:"confidence"`
}

// maxWrongListed bounds HeldStats.WrongCrops of the held-back crops, and
// maxTrainedListed of the crops trained on: with 3% of a set's labels
// wrong (27 wrong rows trained on), 22 and 24 crops trained on were read
// back as another face in two enrolments, every one listed a wrong row
// read as its true face, and the owner is best told of all of them.
const (
	maxWrongListed   = 20
	maxTrainedListed = 50
)

// KindStats is the accuracy on one die kind: on the training crops as
// given, on random augmented views of them, and on the held-back crops.
// Accuracies are -1 when there was nothing to measure.
type KindStats struct {
	Die         string  `json:"die"`
	Train       int     `json:"train"`
	TrainAcc    float64 `json:"train_acc"`
	AugAcc      float64 `json:"aug_acc"`
	Validation  int     `json:"validation"`
	ValAcc      float64 `json:"val_acc"`
	ValAnswered float64 `json:"val_answered"` // share of held-back crops at ≥ DefaultMinConfidence
}

func (o *TrainOptions) defaults(n int) error {
	if o.Arch.Size == 0 {
		cl := o.Arch.Classes
		o.Arch = DefaultArch()
		o.Arch.Classes = cl
	}
	if o.View == 0 {
		o.View = 0.6
	}
	if o.Rotation == 0 {
		o.Rotation = 180
	}
	if o.Rotation < 0 {
		o.Rotation = 0
	}
	if o.Zoom == 0 {
		o.Zoom = 1.2
	}
	if o.Validation == 0 {
		o.Validation = 0.1
	}
	if o.Batch == 0 {
		o.Batch = 32
	}
	if o.LearningRate == 0 {
		o.LearningRate = 0.002
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.Epochs == 0 {
		// A face needs views at many angles, scales and lights however
		// few photos show it (viewBudget); a Deadline may run fewer.
		o.Epochs = min(6000, max(20, viewBudget*bgEvery/((bgEvery+1)*max(n, 1))))
	}
	if o.Context == nil {
		o.Context = context.Background()
	}
	switch {
	case o.View < 0.3 || o.View > 1.6:
		return fmt.Errorf("view %g out of range 0.3..1.6", o.View)
	case o.Lens.check() != nil:
		return o.Lens.check()
	case o.Zoom < 1 || o.Zoom > 2:
		return fmt.Errorf("zoom %g out of range 1..2", o.Zoom)
	case o.Rotation > 180:
		return fmt.Errorf("rotation %g out of range 0..180", o.Rotation)
	case o.Batch < 1 || o.Batch > 4096:
		return fmt.Errorf("batch %d out of range 1..4096", o.Batch)
	case o.Epochs < 0:
		return fmt.Errorf("epochs %d is negative", o.Epochs)
	case o.Validation >= 1:
		return fmt.Errorf("validation share %g must be below 1", o.Validation)
	case !(o.LearningRate > 0 && o.LearningRate < 1):
		return fmt.Errorf("learning rate %g out of range (0,1)", o.LearningRate)
	}
	return nil
}

// item is one prepared crop with its class.
type item struct {
	c     *canon
	class int
	name  string // the sample's, for messages
}

// shards is how many partial gradients a minibatch is split into; fixed so
// that a seed gives the same model on any number of cores.
const shards = 8

// labelSmoothing keeps logits from growing without bound on a small set.
const labelSmoothing = 0.05

// bgEvery is how many die crops an epoch shows per background crop.
const bgEvery = 6

// viewBudget is how many augmented views training shows by default, in at
// most 6,000 epochs. A small set shows each face in one or a few photos,
// so its angles, scales and lights come only from augmentation:
// burksbuilds (86 crops, held to about 600,000 views by the epoch cap)
// read its turned dice at recall 0.979 after 300,000 views and
// 0.985–0.996 (six draws of turns) after 600,000; half as many, 0.957. A
// large set carries more of that variety in its photos but still reads
// more dice the more views it sees: on the 30° stand-in without boxes,
// 1,000 photos, recall 0.817 after 450,000 views, 0.843 after 612,000,
// 0.907 after 815,000, 0.903 (one wrong) after 1,077,000. Before session
// 20 the budget fell to 675,000 at 1,000 crops so as to enrol within ten
// minutes at the slow end of the development VM; enroll now sets a
// Deadline instead, which at about 0.45 ms a view on two cores leaves a
// 1,000-photo set most of this budget.
const viewBudget = 1200000

// Train fits a model to the labelled crops. It needs at least two classes
// (die faces, or one face and background) among the samples.
func Train(samples []Sample, opts TrainOptions) (*Model, error) {
	start := time.Now()
	classes := []class{{}}
	for i, s := range samples {
		if s.Img == nil {
			return nil, fmt.Errorf("numeral: sample %d (%s): no image", i, s.Name)
		}
		if err := checkLabel(s.Die, s.Face); err != nil {
			return nil, fmt.Errorf("numeral: sample %d (%s): %w", i, s.Name, err)
		}
		if s.Die != "" {
			classes = append(classes, class{s.Die, s.Face})
		}
	}
	slices.SortFunc(classes[1:], compareClass)
	classes = slices.Compact(classes)
	if len(classes) < 2 {
		return nil, errors.New("numeral: train: no labelled die among the samples")
	}
	index := map[class]int{}
	for i, c := range classes {
		index[c] = i
	}
	dice := 0
	for _, s := range samples {
		if s.Die != "" {
			dice++
		}
	}
	if err := opts.defaults(dice); err != nil {
		return nil, fmt.Errorf("numeral: train: %w", err)
	}
	opts.Arch.Classes = len(classes)
	nt, err := newNet(opts.Arch)
	if err != nil {
		return nil, err
	}
	m := &Model{arch: opts.Arch, net: nt, classes: classes, view: opts.View, lens: opts.Lens, temp: 1}

	// Prepare every crop once, in parallel.
	items := make([]item, len(samples))
	side := m.canonSide()
	parallel(len(samples), opts.Workers, func(i int) {
		s := samples[i]
		cl := 0
		if s.Die != "" {
			cl = index[class{s.Die, s.Face}]
		}
		items[i] = item{c: toCanon(s.Img, side), class: cl, name: s.Name}
	})
	train, val := split(items, len(classes), opts.Validation, opts.Seed)

	r := rand.New(rand.NewPCG(opts.Seed, 0x6e756d6572616c))
	m.params = nt.initParams(r)
	t := &trainer{net: nt, opts: &opts, train: train, nClasses: len(classes)}
	if err := t.run(m.params, r, start); err != nil {
		return nil, err
	}
	m.temp = calibrate(m, train, val, opts.Seed)
	m.minSharp = minSharpness(train)
	m.stats = stats(m, train, val, opts.Seed)
	read := func(c *canon) (class, float64) {
		die, face, conf, _, _ := m.classifyCanon(c, nil, Views)
		return class{die, face}, conf
	}
	m.stats.Held = readBack(val, m.classes, read, maxWrongListed)
	m.minConf = ownThreshold(m.stats.Held)
	m.stats.Trained = readBack(train, m.classes, read, maxTrainedListed)
	m.stats.Epochs = t.epochsRun
	m.stats.EpochLimit = opts.Epochs
	m.stats.Duration = time.Since(start)
	m.stats.Seconds = m.stats.Duration.Seconds()
	return m, nil
}

// split holds back floor(share·n) crops of each class, chosen at random.
func split(items []item, nClasses int, share float64, seed uint64) (train, val []item) {
	by := make([][]int, nClasses)
	for i, it := range items {
		by[it.class] = append(by[it.class], i)
	}
	r := rand.New(rand.NewPCG(seed, 0x76616c))
	hold := make([]bool, len(items))
	for _, idx := range by {
		k := int(share * float64(len(idx)))
		if share <= 0 || k <= 0 {
			continue
		}
		r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		for _, i := range idx[:k] {
			hold[i] = true
		}
	}
	for i, it := range items {
		if hold[i] {
			val = append(val, it)
		} else {
			train = append(train, it)
		}
	}
	return train, val
}

// parallel calls f(0..n-1) on up to workers goroutines.
func parallel(n, workers int, f func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, max(n, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

type trainer struct {
	// lossCut is the loss above which a die view teaches nothing (see
	// lossDrop); 0: every view teaches.
	lossCut   float64
	net       *net
	opts      *TrainOptions
	train     []item
	nClasses  int
	epochsRun int
	pt        []float32 // the conv weights transposed, for this step (transposeWeights)
}

// shardState is one shard's scratch: its own activations and gradient.
type shardState struct {
	w      *work
	grad   []float32
	loss   float64
	losses []float64 // the losses of this batch's die views
	right  int
	count  int
	target []float32
}

func (t *trainer) run(p []float32, r *rand.Rand, start time.Time) error {
	o := t.opts
	adam := newAdam(len(p))
	st := make([]*shardState, shards)
	for i := range st {
		st[i] = &shardState{w: t.net.newWork(), grad: make([]float32, len(p)), target: make([]float32, t.nClasses)}
	}
	grad := make([]float32, len(p))
	t.pt = make([]float32, len(p))
	t.net.transposeWeights(p, t.pt)
	// An epoch shows every die crop once and at most one background crop
	// per bgEvery die crops: a set photographed one die at a time has
	// about as many background crops as dice, and learning them as often
	// as each face would spend half the training on the easiest class.
	var dice, bg []int
	for i, it := range t.train {
		if it.class == 0 {
			bg = append(bg, i)
		} else {
			dice = append(dice, i)
		}
	}
	nBg := min(len(bg), max(1, len(dice)/bgEvery))
	if len(dice) == 0 {
		nBg = len(bg)
	}
	n := len(dice) + nBg
	perEpoch := (n + o.Batch - 1) / o.Batch
	planned := o.Epochs // the epochs to run, replanned for a Deadline
	total := perEpoch * planned
	warm := min(300, total/10+1)
	order := make([]int, n)
	step := 0
	now := o.now
	if now == nil {
		now = time.Now
	}
	begun := now()
	t.lossCut = 0
	var losses []float64 // the epoch's die views'
	for epoch := 0; epoch < planned; epoch++ {
		losses = losses[:0]
		r.Shuffle(len(bg), func(i, j int) { bg[i], bg[j] = bg[j], bg[i] })
		copy(order, dice)
		copy(order[len(dice):], bg[:nBg])
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		var eLoss float64
		var eRight, eCount int
		for b := 0; b < n; b += o.Batch {
			if err := o.Context.Err(); err != nil {
				return fmt.Errorf("numeral: train: %w", err)
			}
			batch := order[b:min(n, b+o.Batch)]
			// Shard k takes batch[k], batch[k+shards], …; each goroutine
			// takes whole shards, so the sums do not depend on scheduling.
			parallel(shards, o.Workers, func(k int) {
				s := st[k]
				clear(s.grad)
				s.loss, s.right, s.count = 0, 0, 0
				s.losses = s.losses[:0]
				for j := k; j < len(batch); j += shards {
					rr := rand.New(rand.NewPCG(o.Seed^uint64(step)<<20, uint64(j)))
					t.learn(p, s, t.train[batch[j]], rr)
				}
			})
			for _, s := range st {
				losses = append(losses, s.losses...)
				eLoss += s.loss
				eRight += s.right
				eCount += s.count
			}
			sumShards(grad, st, float32(1/float64(len(batch))))
			lr := o.LearningRate
			if step < warm {
				lr *= float64(step+1) / float64(warm)
			} else {
				lr *= 0.02 + 0.98*0.5*(1+math.Cos(math.Pi*min(1, float64(step-warm)/float64(max(1, total-warm)))))
			}
			adam.step(p, grad, lr)
			t.net.transposeWeights(p, t.pt)
			step++
		}
		t.epochsRun = epoch + 1
		if (epoch+1)*lossDropFrom >= planned {
			t.lossCut = lossQuantile(losses, 1-lossDrop)
		}
		if !o.Deadline.IsZero() {
			at := now()
			planned = plan(epoch+1, o.Epochs, at.Sub(begun), o.Deadline.Sub(at))
			total = perEpoch * planned
		}
		if o.Progress != nil {
			o.Progress(Progress{Epoch: epoch + 1, Epochs: planned, Loss: eLoss / float64(max(eCount, 1)),
				Accuracy: float64(eRight) / float64(max(eCount, 1)), Elapsed: time.Since(start)})
		}
	}
	return nil
}

// lossDrop is the share of die views, those of highest loss in the epoch
// before, that teach nothing once 1/lossDropFrom of the epochs are done: a
// view the net reads as another face, time after time, is likelier of a
// mislabelled row than one to learn. Learnt, a wrong row is read back
// surely: with 3% of the 30° blue set's 1,000 enrolment rows changed to
// another face, two test dice were read at 1.00 as two wrong rows had
// named them (270 right, 3 wrong, 27 null); with the 3% of highest loss
// left out, 284 right, 2 wrong, 14 null.
const (
	lossDrop     = 0.03
	lossDropFrom = 20
)

// lossQuantile is the q quantile of losses (sorted in place); 0 (no
// cut) for none.
func lossQuantile(losses []float64, q float64) float64 {
	if len(losses) == 0 {
		return 0
	}
	slices.Sort(losses)
	return losses[min(len(losses)-1, int(float64(len(losses))*q))]
}

// minPlanned is the fewest epochs a Deadline plans: a model trained less
// reads nothing well, and enrolment says when the time ran short.
const minPlanned = 20

// plan is how many epochs to run, up to limit, once done epochs have taken
// took and left remains before the deadline: as many as fit at the pace
// so far, but no fewer than done or minPlanned. The pace is over all the
// epochs so far, so the plan, and with it the learning rate, moves little
// from one epoch to the next.
func plan(done, limit int, took, left time.Duration) int {
	fit := done
	if per := took / time.Duration(done); per > 0 && left > 0 {
		fit += int(min(left/per, time.Duration(limit)))
	} else if left > 0 {
		fit = limit
	}
	return min(limit, max(fit, done, minPlanned))
}

// learn adds one augmented view's gradient to s. Now and then the view is
// swapped for a synthetic non-die patch (flat or graded light with noise),
// so that empty or broken crops fall into the background class even when
// the set has no background crops.
func (t *trainer) learn(p []float32, s *shardState, it item, r *rand.Rand) {
	a := t.net.arch
	cl := it.class
	if r.Float64() < 0.03 {
		h, w := a.inShape()
		synthNegative(s.w.in, h, w, a.Channels, r)
		cl = 0
	} else {
		augment(it.c, a, t.opts.View, t.opts.Lens, t.opts.Rotation, t.opts.Zoom, r, s.w.in)
	}
	standardize(s.w.in)
	logits := t.net.forward(p, s.w)
	softmax(logits, 1, s.w.probs)
	best := 0
	for i, v := range s.w.probs {
		if v > s.w.probs[best] {
			best = i
		}
	}
	if best == cl {
		s.right++
	}
	s.count++
	loss := -math.Log(max(float64(s.w.probs[cl]), 1e-12))
	s.loss += loss
	if cl != 0 {
		s.losses = append(s.losses, loss)
		if t.lossCut > 0 && loss > t.lossCut {
			return // likelier a wrong label than a view to learn (lossDrop)
		}
	}
	// Gradient of the cross-entropy with smoothed targets: p - q.
	eps := float32(labelSmoothing / float64(len(logits)))
	for i := range s.target {
		s.target[i] = s.w.probs[i] - eps
	}
	s.target[cl] -= 1 - labelSmoothing
	t.net.backward(p, t.pt, s.grad, s.w, s.target)
}

// augment samples a randomly rotated, scaled, shifted and stretched view of
// c through l into out, then varies light, blur and noise.
func augment(c *canon, ar Arch, frac float64, l Lens, rotDeg, zoom float64, r *rand.Rand, out []float32) {
	v := centreView(c, ar.Size, frac)
	a := v.m[0] * math.Exp((2*r.Float64()-1)*math.Log(zoom))
	th := (2*r.Float64() - 1) * rotDeg * math.Pi / 180
	e := 1 + 0.08*(2*r.Float64()-1) // mild stretch, as a die seen slightly from the side
	sx, sy := a*e, a/e
	cs, sn := math.Cos(th), math.Sin(th)
	v.m = [4]float64{cs * sx, -sn * sy, sn * sx, cs * sy}
	d := c.dieSide()
	v.cx += 0.06 * d * (2*r.Float64() - 1)
	v.cy += 0.06 * d * (2*r.Float64() - 1)
	c.sample(l.look(v, c), ar, out)
	h, w := ar.inShape()
	photometric(out, h, w, ar.Channels, r)
}

// photometric applies gamma, per-channel gain (white balance), blur and
// sensor noise to values in 0..1. Overall brightness and contrast need no
// augmenting: standardize removes them.
func photometric(x []float32, h, w, channels int, r *rand.Rand) {
	n := h * w
	gamma := math.Exp((2*r.Float64() - 1) * math.Log(1.5))
	// The gamma curve is tabulated and interpolated: a math.Pow per input
	// value was a tenth of a training step. The table is off by at most
	// 0.004 of full scale (in its darkest step, at the strongest gamma),
	// a tenth of the most sensor noise added below.
	var curve [gammaCells + 2]float32
	for i := range gammaCells + 1 {
		curve[i] = float32(math.Pow(float64(i)/gammaCells, gamma))
	}
	curve[gammaCells+1] = curve[gammaCells]
	for ch := 0; ch < channels; ch++ {
		gain := 1.0
		if channels > 1 {
			gain = math.Exp(0.1 * r.NormFloat64())
		}
		pl := x[ch*n : ch*n+n]
		g := float32(gain) * gammaCells
		for i, v := range pl {
			t := min(gammaCells, max(0, v*g))
			k := int(t)
			f := t - float32(k)
			pl[i] = curve[k] + f*(curve[k+1]-curve[k])
		}
	}
	if r.Float64() < 0.5 {
		blur(x, h, w, channels, 0.3+0.9*r.Float64())
	}
	if sigma := 0.04 * r.Float64(); sigma > 0.005 {
		for i := range x {
			x[i] += float32(sigma * r.NormFloat64())
		}
	}
}

// gammaCells is the number of steps photometric tabulates its gamma
// curve in.
const gammaCells = 256

// blur applies a separable Gaussian of the given sigma to each h×w plane.
// (On a polar view it blurs along radius and angle, which is near enough.)
func blur(x []float32, h, w, channels int, sigma float64) {
	rad := int(math.Ceil(2 * sigma))
	k := make([]float32, 2*rad+1)
	var sum float32
	for i := range k {
		d := float64(i - rad)
		k[i] = float32(math.Exp(-d * d / (2 * sigma * sigma)))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	n := h * w
	tmp := make([]float32, n)
	for ch := 0; ch < channels; ch++ {
		pl := x[ch*n : ch*n+n]
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				var s float32
				for i, kw := range k {
					sx := min(max(xx+i-rad, 0), w-1)
					s += kw * pl[y*w+sx]
				}
				tmp[y*w+xx] = s
			}
		}
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				var s float32
				for i, kw := range k {
					sy := min(max(y+i-rad, 0), h-1)
					s += kw * tmp[sy*w+xx]
				}
				pl[y*w+xx] = s
			}
		}
	}
}

// synthNegative fills x (channels planes of h×w) with a patch that is not
// a die: flat or graded colour with noise, sometimes with a bright band (a
// tray edge; on a polar view, a ring).
func synthNegative(x []float32, h, w, channels int, r *rand.Rand) {
	n := h * w
	gx, gy := r.NormFloat64()*0.01, r.NormFloat64()*0.01
	noise := 0.1 * r.Float64()
	for ch := 0; ch < channels; ch++ {
		base := r.Float64()
		for y := 0; y < h; y++ {
			for xx := 0; xx < w; xx++ {
				x[ch*n+y*w+xx] = float32(base + gx*float64(xx) + gy*float64(y) + noise*r.NormFloat64())
			}
		}
	}
	if r.Float64() < 0.3 {
		y0, bh := r.IntN(h), 1+r.IntN(max(1, h/4))
		for ch := 0; ch < channels; ch++ {
			for y := y0; y < min(h, y0+bh); y++ {
				for xx := 0; xx < w; xx++ {
					x[ch*n+y*w+xx] += 0.5
				}
			}
		}
	}
}

// adam is the Adam optimiser with decoupled weight decay.
type adam struct {
	m, v []float32
	t    int
}

func newAdam(n int) *adam { return &adam{m: make([]float32, n), v: make([]float32, n)} }

// step moves p against the gradient g, on one core: its four arrays do
// not fit in a core's cache, and spread over two cores it took as long
// (0.42 s in a 20-epoch run of 1,000 photos; 0.43 s on one).
func (a *adam) step(p, g []float32, lr float64) {
	const b1, b2, eps, decay = 0.9, 0.999, 1e-8, 1e-4
	// Clip the global gradient norm so an odd batch cannot throw the
	// weights far.
	var nn float64
	for _, v := range g {
		nn += float64(v) * float64(v)
	}
	clip := float32(1)
	if nn = math.Sqrt(nn); nn > 5 {
		clip = float32(5 / nn)
	}
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	step := float32(lr / c1)
	sc2 := float32(1 / math.Sqrt(c2))
	wd := float32(1 - lr*decay)
	// Resliced to p's length, the loop runs without bounds checks: 0.26
	// ms a step against 0.33 on 71,573 parameters.
	m, v := a.m[:len(p)], a.v[:len(p)]
	g = g[:len(p)]
	for i := range p {
		gi := g[i] * clip
		m[i] = b1*m[i] + (1-b1)*gi
		v[i] = b2*v[i] + (1-b2)*gi*gi
		p[i] = p[i]*wd - step*m[i]/(float32(math.Sqrt(float64(v[i])))*sc2+eps)
	}
}

// maxCalibrationLoss caps one crop's negative log-likelihood in calibrate:
// the loss of giving its label a chance of one in a thousand.
var maxCalibrationLoss = -math.Log(1e-3)

// calibrate picks the softmax temperature that best predicts the right
// class (least negative log-likelihood) on the held-back crops and views
// of them, or, when nothing was held back, on fresh augmented views of the
// training crops.
func calibrate(m *Model, train, val []item, seed uint64) float64 {
	var set []obs
	// Without held-back crops the training crops stand in, seen only
	// through new augmented views: the crops as given are the ones the
	// net is surest of, and would make it look surer than it is.
	src, views, first := val, 4, 0
	if len(val) == 0 {
		src, views, first = train, 3, 1
	}
	r := rand.New(rand.NewPCG(seed, 0x63616c))
	w := m.net.newWork()
	a := m.arch
	for _, it := range src {
		for k := first; k < views+first; k++ {
			if k == 0 {
				it.c.sample(m.lens.look(centreView(it.c, a.Size, m.view), it.c), a, w.in)
			} else {
				augment(it.c, a, m.view, m.lens, 180, 1.15, r, w.in)
			}
			standardize(w.in)
			set = append(set, obs{slices.Clone(m.net.forward(m.params, w)), it.class})
		}
	}
	return fitTemperature(set)
}

// obs is one view's logits and its labelled class.
type obs struct {
	logits []float32
	class  int
}

// fitTemperature returns the softmax temperature with the least negative
// log-likelihood of the labelled classes, each view's loss capped at
// maxCalibrationLoss; 1 for no views.
func fitTemperature(set []obs) float64 {
	if len(set) == 0 {
		return 1
	}
	nll := func(beta float64) float64 {
		var s float64
		for _, o := range set {
			mx := math.Inf(-1)
			for _, v := range o.logits {
				mx = max(mx, beta*float64(v))
			}
			var z float64
			for _, v := range o.logits {
				z += math.Exp(beta*float64(v) - mx)
			}
			// Each crop's loss is capped: one the net reads as another face
			// with near certainty is far likelier mislabelled (a roller's
			// log carries a little label noise) than mended by a
			// temperature, and uncapped a few such crops flatten every
			// answer below the reader's threshold.
			s += min(mx+math.Log(z)-beta*float64(o.logits[o.class]), maxCalibrationLoss)
		}
		return s
	}
	// Uncapped the NLL is convex in beta = 1/T; a capped term only stops
	// rising, so the sum is no longer convex for certain, and the
	// golden-section search finds a minimum, not always the least one.
	lo, hi := 0.05, 10.0
	g := (math.Sqrt(5) - 1) / 2
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := nll(x1), nll(x2)
	for i := 0; i < 60; i++ {
		if f1 < f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = nll(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = nll(x2)
		}
	}
	return 1 / ((lo + hi) / 2)
}

// stats measures per-kind accuracy on the training crops as given, on one
// augmented view of each, and on the held-back crops.
func stats(m *Model, train, val []item, seed uint64) Stats {
	st := Stats{Temperature: m.temp}
	kinds := map[string]*KindStats{}
	get := func(die string) *KindStats {
		k := kinds[die]
		if k == nil {
			k = &KindStats{Die: die}
			kinds[die] = k
		}
		return k
	}
	w := m.net.newWork()
	a := m.arch
	r := rand.New(rand.NewPCG(seed, 0x737461))
	predict := func(it item, aug bool) (int, float32) {
		if aug {
			augment(it.c, a, m.view, m.lens, 180, 1.15, r, w.in)
		} else {
			it.c.sample(m.lens.look(centreView(it.c, a.Size, m.view), it.c), a, w.in)
		}
		standardize(w.in)
		softmax(m.net.forward(m.params, w), float32(m.temp), w.probs)
		best := 0
		for i, p := range w.probs {
			if p > w.probs[best] {
				best = i
			}
		}
		return best, w.probs[best]
	}
	type acc struct{ right, aug, n, vRight, vAns, vN int }
	counts := map[string]*acc{}
	cnt := func(die string) *acc {
		if counts[die] == nil {
			counts[die] = &acc{}
		}
		return counts[die]
	}
	for _, it := range train {
		if it.class == 0 {
			st.Background++
			continue
		}
		st.Samples++
		c := cnt(m.classes[it.class].Die)
		c.n++
		if b, _ := predict(it, false); b == it.class {
			c.right++
		}
		if b, _ := predict(it, true); b == it.class {
			c.aug++
		}
	}
	for _, it := range val {
		if it.class == 0 {
			continue
		}
		st.Validation++
		c := cnt(m.classes[it.class].Die)
		c.vN++
		b, p := predict(it, false)
		if b == it.class {
			c.vRight++
		}
		if float64(p) >= DefaultMinConfidence {
			c.vAns++
		}
	}
	frac := func(a, b int) float64 {
		if b == 0 {
			return -1
		}
		return float64(a) / float64(b)
	}
	for _, die := range m.Kinds() {
		c := cnt(die)
		k := get(die)
		k.Train, k.TrainAcc, k.AugAcc = c.n, frac(c.right, c.n), frac(c.aug, c.n)
		k.Validation, k.ValAcc, k.ValAnswered = c.vN, frac(c.vRight, c.vN), frac(c.vAns, c.vN)
		st.Kinds = append(st.Kinds, *k)
	}
	return st
}

// LabelDoubt is the confidence from which a held-back crop answered wrongly
// (see Model.MinConfidence) is taken as mislabelled rather than as a weakness of the model (a
// roller's log carries a little label noise; see maxCalibrationLoss): a
// threshold above it would leave nearly every die unread.
const LabelDoubt = 0.99

// readBack reads die crops (held back, or trained on) as a reader does
// (read, the model's Classify) and returns what it found, listing up to
// listed crops answered wrongly.
func readBack(items []item, classes []class, read func(*canon) (class, float64), listed int) HeldStats {
	var h HeldStats
	for _, it := range items {
		if it.class == 0 {
			continue
		}
		h.Read++
		got, conf := read(it.c)
		want := classes[it.class]
		wrong := got != want
		if conf >= DefaultMinConfidence {
			h.Answered++
			if wrong {
				h.Wrong++
				if len(h.WrongCrops) < listed {
					hw := HeldWrong{Name: it.name, Die: want.Die, Face: want.Face, Read: got.Face, Confidence: conf}
					if got.Die != want.Die {
						hw.ReadDie = got.Die
					}
					h.WrongCrops = append(h.WrongCrops, hw)
				}
			}
		}
		if wrong && conf < LabelDoubt {
			h.SurestWrong = max(h.SurestWrong, conf)
		}
	}
	return h
}

// ownThreshold is the model's own threshold (Model.MinConfidence) from its
// held-back crops read back: just above the surest wrong answer below
// LabelDoubt, the next hundredth up (0.966 gives 0.97), or 0 when none was
// wrong.
//
// The threshold is one for every model, and the held-back crops say which
// models need more. On session 24's combined stand-in (30°, a small soft
// die in a wide frame under drifting light) one held-back "1" was read as
// 7 at 0.966, and the test photos read 277 right and 4 wrong at 0.9, 263
// and 0 at 0.97. On five other stand-ins no held-back crop answered at 0.9
// or more was wrong, and their thresholds stay. A flat rule (0.95 for every
// model whose held-back accuracy, one look each, is below 0.99) would
// have cost 20 older stand-in models 240 right answers to save 9 wrong.
func ownThreshold(h HeldStats) float64 {
	if h.SurestWrong == 0 {
		return 0
	}
	return (math.Floor(h.SurestWrong*100) + 1) / 100
}

// sumShards writes into g the shards' gradients, each element summed from
// +0 in shard order and then scaled, in one pass on one core: 0.08 s in a
// 20-epoch run of 1,000 photos, where a stretch per core, added shard by
// shard into a cleared g and then scaled, took 0.19 s. The sums are the
// same.
func sumShards(g []float32, st []*shardState, scale float32) {
	var _ [shards - 8]struct{} // the sum below is unrolled for 8 shards
	var _ [8 - shards]struct{}
	n := len(g)
	s0, s1, s2, s3 := st[0].grad[:n], st[1].grad[:n], st[2].grad[:n], st[3].grad[:n]
	s4, s5, s6, s7 := st[4].grad[:n], st[5].grad[:n], st[6].grad[:n], st[7].grad[:n]
	for i := range g {
		v := float32(0)
		v += s0[i]
		v += s1[i]
		v += s2[i]
		v += s3[i]
		v += s4[i]
		v += s5[i]
		v += s6[i]
		v += s7[i]
		g[i] = v * scale
	}
}
