package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/towerd/towerd/vision"
	"github.com/towerd/towerd/vision/dataset"
)

func init() {
	Register(&Command{
		Name:  "eval",
		Usage: "eval [--model M] [--dice d6,...] [--json] [--verbose] DATASET",
		Summary: "Read every photo of a labelled dataset (labels.csv) and print accuracy per kind, confusion of faces, " +
			"dice missed and invented, precision, recall and ms per photo.",
		Run: runEval,
	})
}

// evalJSON is the --json report.
type evalJSON struct {
	Dataset    string  `json:"dataset"`
	Precision  float64 `json:"precision"`
	Recall     float64 `json:"recall"`
	MsPerPhoto float64 `json:"ms_per_photo"`
	// MinConfidence is what a face the model reads needed (the model's
	// own when above --min-confidence).
	MinConfidence float64 `json:"min_confidence"`
	// Skew is dataset.Score.Skews: each kind with enough dice of every
	// face.
	Skew map[string]map[int]float64 `json:"skew,omitempty"`
	*dataset.Score
}

func runEval(ctx context.Context, env *Env, args []string) error {
	c := commands["eval"]
	fs := NewFlagSet(env, c)
	var rf readerFlags
	rf.register(fs)
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	verbose := fs.Bool("verbose", false, "list every die read wrong, left null, missed or invented")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return Exit(2, "")
	}
	r, err := rf.reader()
	if err != nil {
		return err
	}
	set, err := dataset.Load(fs.Arg(0))
	if err != nil {
		return Exit(2, "towerd eval: "+err.Error())
	}
	score := dataset.NewScore()
	for _, file := range set.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		labels := set.Labels[file]
		img, err := decodeImage(set.Path(file))
		if err != nil {
			env.Log.Warn("eval: photo unreadable", "file", file, "err", err)
			score.AddError(labels)
			continue
		}
		start := time.Now()
		dice, err := r.Read(img)
		took := time.Since(start)
		if err != nil {
			env.Log.Warn("eval: reading failed", "file", file, "err", err)
			score.AddError(labels)
			continue
		}
		answers := vision.Answers(dice)
		pairs := score.Add(labels, answers, took)
		if *verbose {
			for _, p := range pairs {
				if s := describe(labels, answers, p); s != "" {
					fmt.Fprintf(env.Stdout, "%s: %s\n", file, s)
				}
			}
		}
	}
	if *asJSON {
		b, err := json.Marshal(evalJSON{Dataset: fs.Arg(0), Precision: score.Precision(), Recall: score.Recall(), MsPerPhoto: score.MsPerPhoto(),
			MinConfidence: r.MinConfidence(), Skew: score.Skews(), Score: score})
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, string(b))
	} else {
		if err := score.WriteText(env.Stdout); err != nil {
			return err
		}
		asked := rf.minConf
		if asked == 0 {
			asked = vision.DefaultMinConfidence
		}
		fmt.Fprintf(env.Stdout, "\nfaces answered at confidence %.2f or more", r.MinConfidence())
		if r.MinConfidence() > asked {
			fmt.Fprintf(env.Stdout, ": the model's own threshold, above the %.2f asked (its held-back photos were read wrongly below it)", asked)
		}
		fmt.Fprintln(env.Stdout)
	}
	// A photo that cannot be decoded (a camera's corrupt frame) is scored
	// as read by nobody: its dice count against recall, not as a failure
	// of eval, unless no photo at all could be read.
	if score.PhotoErrors > 0 && score.Photos == 0 {
		return Exit(1, fmt.Sprintf("towerd eval: none of %d photos could be read", score.PhotoErrors))
	}
	return nil
}

// describe says what went wrong with one pair, or "" when it was right.
func describe(labels []dataset.Label, answers []dataset.Answer, p dataset.Pair) string {
	ans := func(a dataset.Answer) string {
		f := "null"
		if a.Face != nil {
			f = strconv.Itoa(*a.Face)
		}
		s := fmt.Sprintf("%s %s (%.2f) at [%d,%d,%d,%d]", a.Die, f, a.Confidence, a.Box.Min.X, a.Box.Min.Y, a.Box.Dx(), a.Box.Dy())
		if a.Cocked {
			s += " cocked"
		}
		return s
	}
	switch {
	case p.Label < 0:
		return "invented " + ans(answers[p.Answer])
	case p.Answer < 0:
		l := labels[p.Label]
		return fmt.Sprintf("missed %s %d (line %d)", l.Die, l.Face, l.Line)
	}
	l, a := labels[p.Label], answers[p.Answer]
	if a.Face != nil && *a.Face == l.Face && a.Die == l.Die {
		return ""
	}
	return fmt.Sprintf("%s %d (line %d) read as %s", l.Die, l.Face, l.Line, ans(a))
}

var _ = vision.Kinds
