package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/towerd/towerd/vision"
	"github.com/towerd/towerd/vision/dataset"
	"github.com/towerd/towerd/vision/numeral"
)

func init() {
	Register(&Command{
		Name:  "enroll",
		Usage: "enroll --out M [--epochs N] [--seed S] [--rotation DEG] [--lens=false] [--max-time D] [--min-accuracy A] [--force] DATASET",
		Summary: "Learn a dice set (kinds and faces, in its own font and colours) from labelled photos " +
			"(labels.csv: file,die,face,x,y,w,h) and write the model that `read --model` and `eval --model` use.",
		Run: runEnroll,
	})
}

func runEnroll(ctx context.Context, env *Env, args []string) error {
	c := commands["enroll"]
	fs := NewFlagSet(env, c)
	out := fs.String("out", "", "model file to write (required)")
	epochs := fs.Int("epochs", 0, "training passes over the crops (default: chosen from the set's size)")
	seed := fs.Uint64("seed", 1, "seed: the same photos and seed give the same model")
	rotation := fs.Float64("rotation", 0, "largest training rotation in degrees either way (default 180, dice land at any angle; "+
		fmt.Sprint(slantRotation)+" when a camera's slant is found, as it sees the dice from one side)")
	minAcc := fs.Float64("min-accuracy", 0, "refuse to write the model when a kind reads below this on held-back crops "+
		"(or, with none held back, on new augmented views); 0: always write it, and warn below "+fmt.Sprint(warnAccuracy))
	slant := fs.Bool("lens", true, "when the photos share one camera's view, look for that camera's slant and read each die's up face "+
		"as if seen from straight above (numeral.FitLens); false: always look at the middle of the die")
	maxTime := fs.Duration("max-time", defaultMaxTime, "finish enrolment within about this: training plans its epochs to end in time "+
		"(fewer views on a slow machine); 0: no limit; with --epochs, none unless given")
	force := fs.Bool("force", false, "write the model even when a kind reads below --min-accuracy")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" || *minAcc < 0 || *minAcc > 1 || *maxTime < 0 {
		fs.Usage()
		return Exit(2, "")
	}
	start := time.Now()
	set, err := dataset.Load(fs.Arg(0))
	if err != nil {
		return Exit(2, "towerd enroll: "+err.Error())
	}
	scene, rep, err := learnScene(env, set)
	if err != nil {
		return fmt.Errorf("towerd enroll: %w", err)
	}
	var aloneFix [4]float64 // for dice found in each photo alone: only without a tray
	if scene == nil {
		aloneFix = rep.AloneFix
	}
	dopts := numeral.DatasetOptions{Seed: *seed}
	var loc *locator
	if set.Unboxed() > 0 {
		loc = &locator{scene: scene, fix: aloneFix}
		dopts.Locate = loc.locate
		if scene == nil {
			// Without a learnt tray, dice are located in each photo alone
			// unless the photos are close-ups of one die, which no region
			// detector separates from the photo: those are taken whole.
			if tried, located := vision.ProbeLocateAlone(set, decodeImage); tried > 0 && 2*located < tried {
				fmt.Fprintf(env.Stdout, "dice without a box: found alone in %d of %d photos tried; taking each such photo whole, as a close-up of its die\n", located, tried)
				loc, dopts.Locate = nil, nil
			}
		}
	}
	// A camera's log holds a few corrupt frames: they are left out and
	// counted, not a reason to learn nothing from the rest.
	var skipped []error
	dopts.Skip = func(err error) { skipped = append(skipped, err) }
	samples, err := numeral.LoadDataset(fs.Arg(0), dopts)
	if err != nil {
		return Exit(2, "towerd enroll: "+err.Error())
	}
	if len(skipped) > 0 {
		fmt.Fprintf(env.Stdout, "left out %d photos that could not be used:\n", len(skipped))
		for i, e := range skipped {
			if i == 10 {
				fmt.Fprintf(env.Stdout, "  ... and %d more\n", len(skipped)-i)
				break
			}
			fmt.Fprintf(env.Stdout, "  %v\n", e)
		}
	}
	env.Log.Info("enroll: crops loaded", "crops", len(samples), "took", time.Since(start).Round(time.Millisecond))
	if loc != nil {
		where := "in the learnt tray"
		if scene == nil {
			where = "in each photo alone"
		}
		fmt.Fprintf(env.Stdout, "located %d of %d dice without a box %s; the rest are left out\n", loc.found, set.Unboxed(), where)
		if scene != nil {
			scene.AddDice(loc.boxes)
		}
		if k := unboxedKind(set); rep.Sizes == nil && k != "" && rep.View != (image.Point{}) {
			// No box labelled: the dice located as reading finds them
			// tell how large a whole die lies in the view, kept tray or
			// not (reading then knows the view by its photos' size).
			if rep.Sizes = vision.LocatedSizes(rep.View, k, loc.boxes); rep.Sizes != nil {
				printSizes(env, "located", rep.Sizes)
			}
		}
	}
	if scene != nil {
		fmt.Fprintf(env.Stdout, "scene: dice lie within %v\n", scene.Region)
	}
	lens, probe := fitLens(env, samples, *slant && slantShown(scene, rep))
	opts := numeral.TrainOptions{Epochs: *epochs, Seed: *seed, Rotation: *rotation, Context: ctx,
		Lens: lens,
		Progress: func(p numeral.Progress) {
			if p.Epoch%max(1, p.Epochs/30) == 0 || p.Epoch == p.Epochs { // about 30 lines
				env.Log.Info("enroll: training", "epoch", p.Epoch, "of", p.Epochs, "loss", p.Loss, "accuracy", p.Accuracy,
					"elapsed", p.Elapsed.Round(time.Second))
			}
		}}
	turnLess := func() {
		// A camera at a slant sees the dice from one side: turned far, a
		// crop shows what it never will (and 6 and 9 meet).
		if opts.Lens != (numeral.Lens{}) && opts.Rotation != slantRotation && !flagSet(fs, "rotation") {
			opts.Rotation = slantRotation
			fmt.Fprintf(env.Stdout, "rotation: training crops turned up to %g° either way (--rotation to change)\n", slantRotation)
		}
	}
	turnLess() // before the short runs, which train as the model will
	if probe {
		l, err := probeLens(env, samples, opts)
		if err != nil {
			return fmt.Errorf("towerd enroll: %w", err)
		}
		opts.Lens = l
		turnLess() // a slant the runs found where the fit found none
	}
	if *maxTime > 0 && (*epochs == 0 || flagSet(fs, "max-time")) {
		// What follows training (calibration, measures, writing) takes
		// seconds; a thirtieth of the limit is kept for it.
		opts.Deadline = start.Add(*maxTime - *maxTime/30)
	}
	m, err := numeral.Train(samples, opts)
	if err != nil {
		return fmt.Errorf("towerd enroll: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if scene != nil {
		b, err := json.Marshal(scene)
		if err != nil {
			return fmt.Errorf("towerd enroll: %w", err)
		}
		m.SetScene(b)
	}
	if aloneFix != ([4]float64{}) {
		m.SetBoxFix(aloneFix[:])
	}
	if rep.Sizes != nil {
		b, err := json.Marshal(rep.Sizes)
		if err != nil {
			return fmt.Errorf("towerd enroll: %w", err)
		}
		m.SetSizes(b)
	}
	st := m.Stats()
	fmt.Fprintf(env.Stdout, "trained: %d die crops, %d background, %d held back, %d epochs in %.0f s; kinds:\n",
		st.Samples, st.Background, st.Validation, st.Epochs, time.Since(start).Seconds())
	if st.EpochLimit > st.Epochs {
		fmt.Fprintf(env.Stdout, "time: --max-time %v left time for %d of %d epochs; a longer limit (or a faster machine) may read more dice\n",
			*maxTime, st.Epochs, st.EpochLimit)
	}
	if ms := m.MinSharpness(); ms > 0 {
		fmt.Fprintf(env.Stdout, "sharpness: a die blurrier than %.4f (about two thirds of the blurriest training dice's, the 1%% most blurred left out) is left unread; "+
			"one blurrier than %.4f (the blurriest training dice's) must be read %d times as surely (%.3g for %.3g)\n",
			ms, m.SoftSharpness(), numeral.SoftFactor, 1-(1-vision.DefaultMinConfidence)/numeral.SoftFactor, vision.DefaultMinConfidence)
	}
	var weak, poor []string
	for _, k := range st.Kinds {
		fmt.Fprintf(env.Stdout, "  %-4s train %d acc %.3f, augmented %.3f, held back %d acc %.3f answered %.3f\n",
			k.Die, k.Train, k.TrainAcc, k.AugAcc, k.Validation, k.ValAcc, k.ValAnswered)
		acc := kindAccuracy(k)
		if acc < *minAcc {
			weak = append(weak, fmt.Sprintf("%s %.3f", k.Die, acc))
		}
		if acc < warnAccuracy {
			poor = append(poor, fmt.Sprintf("%s %.3f", k.Die, acc))
		}
	}
	if h := st.Held; h.Read > 0 {
		fmt.Fprintf(env.Stdout, "held back, read as a photo's dice are read: %d of %d answered at %.2f or more, %d of them wrong",
			h.Answered, h.Read, vision.DefaultMinConfidence, h.Wrong)
		switch t := m.MinConfidence(); {
		case t > vision.DefaultMinConfidence:
			fmt.Fprintf(env.Stdout, "; the surest wrong answer below %.2f was at %.3f, so the model's faces need %.2f or more (a higher configured threshold stands)\n",
				numeral.LabelDoubt, h.SurestWrong, t)
		case t > 0:
			fmt.Fprintf(env.Stdout, "; the surest wrong answer was at %.3f: a threshold set below %.2f is raised to it for the model's faces\n",
				h.SurestWrong, t)
		default:
			fmt.Fprintf(env.Stdout, "; none below %.2f wrong\n", numeral.LabelDoubt)
		}
		if len(h.WrongCrops) > 0 {
			fmt.Fprintln(env.Stdout, heldWrongLine("held back and read wrongly (check these labels: a wrong one is learnt too)", h))
		}
	}
	if t := st.Trained; t.Read > 0 {
		fmt.Fprintf(env.Stdout, "trained on, read back as a photo's dice are read: %d of %d answered at %.2f or more, %d of them as another face\n",
			t.Answered, t.Read, vision.DefaultMinConfidence, t.Wrong)
		if len(t.WrongCrops) > 0 {
			fmt.Fprintln(env.Stdout, heldWrongLines("trained on and read as another face (check these labels: the net did not learn them as labelled)", t))
		}
	}
	// A model that reads some kind poorly still answers only what it is
	// sure of (the rest is null, a re-tumble), and photos of a hard set
	// (small dice, noisy labels) may never read better: it is written, with
	// a warning, unless --min-accuracy asks for a bar.
	if len(poor) > 0 {
		fmt.Fprintf(env.Stdout, "warning: below %.2f: %s; expect null faces (re-tumbles) for these; "+
			"more labelled photos or epochs may help\n", warnAccuracy, strings.Join(poor, ", "))
	}
	if len(weak) > 0 && !*force {
		return Exit(1, fmt.Sprintf("towerd enroll: not written: below --min-accuracy %.2f: %s; add labelled photos or epochs (or --force)",
			*minAcc, strings.Join(weak, ", ")))
	}
	if err := m.Save(*out); err != nil {
		return fmt.Errorf("towerd enroll: %w", err)
	}
	fmt.Fprintf(env.Stdout, "enrolled %s\n", *out)
	return nil
}

// warnAccuracy is the accuracy on held-back crops below which enroll warns
// of a kind: it will often be left unread.
const warnAccuracy = 0.95

// learnScene learns what the dataset's photos show of one camera's view
// (vision.LearnScene): the empty tray and where dice lie, which reading
// with the model then uses for photos of that view. The scene is nil when
// the photos do not share one view or the tray finds dice worse than each
// photo alone; the report then holds the box fix for dice found alone
// (zero when their boxes lie where the labelled ones do, or none are
// labelled). Its Sizes, when the photos share a view, are how large the
// labelled dice lie in it.
func learnScene(env *Env, set *dataset.Set) (*vision.Scene, vision.SceneReport, error) {
	s, rep, err := vision.LearnScene(set, decodeImage)
	if err != nil {
		return nil, rep, err
	}
	if rep.Sizes != nil {
		printSizes(env, "labelled", rep.Sizes)
	}
	if s == nil {
		fmt.Fprintf(env.Stdout, "scene: none learnt: %s\n", rep.Why)
		if f := rep.AloneFix; f != ([4]float64{}) {
			// A die whose lit faces match the floor is found by its
			// shaded side, and its shadow joins it: reading looks where
			// the labelled boxes lay.
			fmt.Fprintf(env.Stdout, "boxes: dice found in each photo alone lie off their labelled boxes; reading moves their edges in by "+
				"%.2f left, %.2f top, %.2f right, %.2f bottom of the box (negative: out)\n", f[0], f[1], f[2], f[3])
		}
		return nil, rep, nil
	}
	fmt.Fprintf(env.Stdout, "scene: the empty tray learnt from %d photos of %dx%d; dice there found with it %d of %d (%d invented), "+
		"from each photo alone %d (%d invented); a chroma difference of %d from it marks a die (its steadiness allows %d)\n",
		rep.Photos, s.Width, s.Height, rep.FoundScene, rep.Dice, rep.InventedScene, rep.FoundAlone, rep.InventedAlone, s.Chroma(), rep.Chroma)
	if rep.RareLooked > 0 {
		fmt.Fprintf(env.Stdout, "scene: %d points of the tray (where the dice rest) were shown by fewer than %d of those photos; "+
			"%d of them learnt from the set's other %d photos too\n", rep.Rare, vision.TrayRare, rep.RareLearnt, rep.RareLooked)
	}
	return s, rep, nil
}

// printSizes says how large the dice (labelled or located) lie in the view.
func printSizes(env *Env, which string, v *vision.ViewSizes) {
	var ks []string
	for k, r := range v.Kinds {
		ks = append(ks, fmt.Sprintf("%s %d–%d x %d–%d", k, r.W[0], r.W[1], r.H[0], r.H[1]))
	}
	slices.Sort(ks)
	fmt.Fprintf(env.Stdout, "sizes: %s dice in the %dx%d view lie %s px; a face read through a box well outside is left unread\n",
		which, v.Width, v.Height, strings.Join(ks, ", "))
}

// unboxedKind is the one kind of the set's dice labelled without a box,
// or "" when they are of several (located boxes do not say whose they
// are) or none.
func unboxedKind(set *dataset.Set) string {
	kind := ""
	for _, ls := range set.Labels {
		for _, l := range ls {
			if l.HasBox {
				continue
			}
			if kind != "" && l.Die != kind {
				return ""
			}
			kind = l.Die
		}
	}
	return kind
}

// locator finds dice without a box in enrolment photos (numeral's Locate,
// called concurrently): against the learnt tray when there is one, else
// from each photo alone; it keeps what it found for the scene's region.
type locator struct {
	scene *vision.Scene // nil: each photo alone
	fix   [4]float64    // without a scene: vision.SceneReport.AloneFix
	mu    sync.Mutex
	found int
	boxes []image.Rectangle
}

func (l *locator) locate(img image.Image, boxed []image.Rectangle, n int) []image.Rectangle {
	var boxes []image.Rectangle
	if l.scene != nil {
		boxes = l.scene.Locate(img, boxed, n)
	} else {
		boxes = vision.LocateAlone(img, boxed, n, l.fix)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.found += len(boxes)
	for _, b := range boxes {
		l.boxes = append(l.boxes, b.Sub(img.Bounds().Min))
	}
	return boxes
}

// defaultMaxTime is enroll's time limit: a set of 1,000 photos must enrol
// within ten minutes on the two cores of the development VM, whose speed
// varies by half from hour to hour, and more training reads more dice
// there: by session 20's reader, the six stand-ins of docs/vision.md read
// 1,730 of 1,800 dice trained to this limit (958–1,028 epochs, 8–9
// minutes), 1,669 after the 578 epochs that fitted the slow hours (by
// session 21's reader, the same six models read 1,761).
const defaultMaxTime = 9 * time.Minute

// slantRotation is the training rotation when a lens is found. On the
// oblique stand-in it read 286 of 300 where full turns read 278 (both
// precision 1.000); at 30°, 238 against 237.
const slantRotation = 15.0

// flagSet reports whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// slantShown reports whether a set's dice show the slant of one camera
// plainly enough to fit a lens (fitLens): the photos share one view, and
// a tray was learnt or each photo alone finds nine in ten of the dice.
// Where dice rest near one spot (a popper's dish) no tray is kept, since
// the floor under the spot is never seen, but each photo alone shows its
// die. On a light floor, where the die's lit faces match it, boxes found
// alone lie off the die (a 55° ivory stand-in: 68 of 120 found), and a
// lens fitted to them took precision from 0.79 to 0.60.
func slantShown(scene *vision.Scene, rep vision.SceneReport) bool {
	return rep.View != (image.Point{}) && (scene != nil || 10*rep.FoundAlone >= 9*rep.Dice)
}

// fitLens looks for the slant of the camera that took a set's photos when
// on (they show it, slantShown, and --lens is on): a roller's webcam, a
// tower's camera; on a camera looking down it finds none. It also says
// whether to settle the lens by short training runs (probeLens): when it
// found a slant, and when it found none but a slant came close. Its
// nearest neighbours can miss a steep camera's slant: the 30° stand-in's
// dice, their up faces squashed to half, were matched by their sides
// (straight on 0.296, the best slant 0.286), and a model read straight on
// answered 4 of 269 faces wrong (13 as 19 three times). A tower's camera
// looking down is clear (0.570 against 0.150) and pays for no runs.
func fitLens(env *Env, samples []numeral.Sample, on bool) (numeral.Lens, bool) {
	if !on {
		return numeral.Lens{}, false
	}
	start := time.Now()
	fit := numeral.FitLens(samples, numeral.DefaultArch(), 0)
	if fit.Crops < numeral.MinLensCrops {
		fmt.Fprintf(env.Stdout, "lens: none: %d labelled dice are too few to tell a camera's slant (%d needed)\n", fit.Crops, numeral.MinLensCrops)
		return numeral.Lens{}, false
	}
	l := fit.Lens
	if l == (numeral.Lens{}) {
		near := slantNear(fit)
		then := ""
		if near {
			then = "; a slant came close, so short runs try two"
		}
		fmt.Fprintf(env.Stdout, "lens: the camera looks straight down (same face nearest %.3f of %d crops; no slant did clearly better, best %.3f; %.0f s)%s\n",
			fit.Straight, fit.Crops, fit.Best, time.Since(start).Seconds(), then)
		return l, near
	}
	fmt.Fprintf(env.Stdout, "lens: the camera looks from a slant: the up face lies (%+.2f, %+.2f) die sides from the middle, squashed to %.2f "+
		"(same face nearest %.3f of %d crops, straight on %.3f; %.0f s)\n", l.DX, l.DY, l.Squash, fit.Score, fit.Crops, fit.Straight, time.Since(start).Seconds())
	return l, true
}

// closeSlant is how near, as a share of straight on's score, the best
// slant's must come for fitLens to have short runs try slants anyway.
const closeSlant = 0.75

// slantNear reports whether a fit that kept no lens saw a slant score
// close to straight on's.
func slantNear(fit numeral.LensFit) bool { return fit.Best >= closeSlant*fit.Straight }

// probeLens settles how far and how steep the fitted lens (opts.Lens)
// looks by short training runs through it and slants along its way
// (numeral.ProbeLens), and returns the one the net reads best through.
func probeLens(env *Env, samples []numeral.Sample, opts numeral.TrainOptions) (numeral.Lens, error) {
	start := time.Now()
	cands := numeral.ProbeCandidates(opts.Lens)
	scores, err := numeral.ProbeLens(samples, cands, numeral.TrainOptions{Seed: opts.Seed, Rotation: opts.Rotation, Context: opts.Context})
	if err != nil {
		return numeral.Lens{}, err
	}
	best := numeral.PickProbed(scores)
	name := func(l numeral.Lens) string {
		if l == (numeral.Lens{}) {
			return "straight on"
		}
		return fmt.Sprintf("(%+.2f, %+.2f) squashed to %.2f", l.DX, l.DY, l.Squash)
	}
	var tried []string
	for i, l := range cands {
		tried = append(tried, fmt.Sprintf("%s: %.3f", name(l), scores[i]))
	}
	l := cands[best]
	fmt.Fprintf(env.Stdout, "lens: short training runs read held-back crops through %s; using %s (%.0f s)\n",
		strings.Join(tried, ", "), name(l), time.Since(start).Seconds())
	return l, nil
}

// kindAccuracy is what a kind's reading is judged by: its held-back crops
// when there are any, else new augmented views of its training crops.
func kindAccuracy(k numeral.KindStats) float64 {
	if k.Validation > 0 {
		return k.ValAcc
	}
	return k.AugAcc
}

// heldWrongLine lists after lead the crops (held back, or trained on) read
// wrongly, for the owner to look at: one read wrongly and surely is
// likelier labelled wrongly, and a wrong label is learnt too.
func heldWrongLine(lead string, h numeral.HeldStats) string {
	return lead + ": " + strings.Join(wrongCrops(h), "; ")
}

// heldWrongLines is heldWrongLine with a crop on each line, for a longer
// list (up to 50 crops trained on).
func heldWrongLines(lead string, h numeral.HeldStats) string {
	return lead + ":\n  " + strings.Join(wrongCrops(h), "\n  ")
}

// wrongCrops says of each crop read wrongly its name, label and the face
// read, and counts those past the list.
func wrongCrops(h numeral.HeldStats) []string {
	ws := make([]string, 0, len(h.WrongCrops)+1)
	for _, w := range h.WrongCrops {
		rd := w.ReadDie
		if rd == "" {
			rd = w.Die
		}
		ws = append(ws, fmt.Sprintf("%s labelled %s %d, read %s %d (%.2f)", w.Name, w.Die, w.Face, rd, w.Read, w.Confidence))
	}
	if more := h.Wrong - len(h.WrongCrops); more > 0 {
		ws = append(ws, fmt.Sprintf("%d more", more))
	}
	return ws
}
