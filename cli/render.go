package cli

import (
	"context"
	"fmt"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision"
)

func init() {
	Register(&Command{
		Name:  "render",
		Usage: "render [--photos N] [--seed S] [--dice d4,d8,...] [--d6 pips|numerals] [--one-tray] DIR",
		Summary: "Draw a labelled dataset of simulated tray photos (PNGs and labels.csv) into DIR: " +
			"`towerd enroll` on it makes the model that reads the simulated camera's numbered dice.",
		Run: runRender,
	})
}

func runRender(ctx context.Context, env *Env, args []string) error {
	c := commands["render"]
	fs := NewFlagSet(env, c)
	photos := fs.Int("photos", 300, "photos to draw")
	seed := fs.Uint64("seed", 1, "seed: the same flags give the same photos")
	dice := fs.String("dice", "", "kinds to draw (default: every kind but the d6, whose pips need no model)")
	d6 := fs.String("d6", "pips", "how d6s are drawn: pips or numerals")
	oneTray := fs.Bool("one-tray", false, "draw every photo in one tray under one light, as a tower's camera sees it "+
		"(enrolment then learns the empty tray); default: a random tray per photo")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *photos < 1 {
		fs.Usage()
		return Exit(2, "")
	}
	o := render.DatasetOptions{Photos: *photos, Seed: *seed, OneTray: *oneTray}
	switch *d6 {
	case "pips":
		o.D6 = render.D6Pips
	case "numerals":
		o.D6 = render.D6Numerals
	default:
		return Exit(2, fmt.Sprintf("towerd render: --d6 %q: want pips or numerals", *d6))
	}
	kinds, err := vision.ParseKinds(*dice)
	if err != nil {
		return Exit(2, "towerd render: --dice: "+err.Error())
	}
	for _, k := range kinds {
		d, err := rules.ParseDie(k)
		if err != nil {
			return Exit(2, "towerd render: --dice: "+err.Error())
		}
		o.Kinds = append(o.Kinds, d)
	}
	if err := render.WriteDataset(fs.Arg(0), o); err != nil {
		return fmt.Errorf("towerd render: %w", err)
	}
	fmt.Fprintf(env.Stdout, "rendered %d photos into %s (labels.csv); enroll them with: towerd enroll --out MODEL %s\n",
		*photos, fs.Arg(0), fs.Arg(0))
	return nil
}
