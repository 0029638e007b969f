package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // photos
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/towerd/towerd/vision"
	"github.com/towerd/towerd/vision/numeral"
)

func init() {
	Register(&Command{
		Name:    "read",
		Usage:   "read [--model M] [--dice d6,d20,...] [--json] [--annotate DIR] IMAGE...",
		Summary: "Read the dice in photos: kind, up face (null when unsure), confidence and box per die.",
		Run:     runRead,
	})
}

// readerFlags are the flags read and eval share.
type readerFlags struct {
	model   string
	dice    string
	minConf float64
}

func (f *readerFlags) register(fs interface {
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
}) {
	fs.StringVar(&f.model, "model", "", "dice set model learned by `towerd enroll` (needed for numbered dice)")
	fs.StringVar(&f.dice, "dice", "", "comma-separated kinds that may be present (d4,d6,d8,d10,d12,d20,d100); default any")
	fs.Float64Var(&f.minConf, "min-confidence", 0, "confidence a face needs to be reported (default: the reader's)")
}

// reader builds a vision.Reader from the flags; errors exit 2.
func (f *readerFlags) reader() (*vision.Reader, error) {
	kinds, err := vision.ParseKinds(f.dice)
	if err != nil {
		return nil, Exit(2, "towerd: --dice: "+err.Error())
	}
	opts := vision.Options{AllowedKinds: kinds, MinConfidence: f.minConf}
	if f.model != "" {
		m, err := numeral.Load(f.model)
		if err != nil {
			return nil, Exit(2, fmt.Sprintf("towerd: --model: %v", err))
		}
		opts.Model = m
	}
	r, err := vision.NewReader(opts)
	if err != nil {
		return nil, Exit(2, "towerd: "+err.Error())
	}
	return r, nil
}

// jsonDie is one die on a `towerd read --json` line.
type jsonDie struct {
	Die        *string `json:"die"`
	Face       *int    `json:"face"`
	Confidence float64 `json:"confidence"`
	Box        [4]int  `json:"box"`
	Cocked     bool    `json:"cocked,omitempty"`
}

// jsonRead is one line of `towerd read --json`.
type jsonRead struct {
	File string    `json:"file"`
	Dice []jsonDie `json:"dice"`
}

// jsonReadError is the line of a file that could not be read.
type jsonReadError struct {
	File  string `json:"file"`
	Error string `json:"error"`
}

func toJSONDice(ds []vision.Die) []jsonDie {
	out := make([]jsonDie, 0, len(ds))
	for _, d := range ds {
		j := jsonDie{Face: d.Face, Confidence: d.Confidence, Cocked: d.Cocked,
			Box: [4]int{d.Box.Min.X, d.Box.Min.Y, d.Box.Dx(), d.Box.Dy()}}
		if d.Kind != "" {
			k := d.Kind
			j.Die = &k
		}
		out = append(out, j)
	}
	return out
}

func runRead(ctx context.Context, env *Env, args []string) error {
	c := commands["read"]
	fs := NewFlagSet(env, c)
	var rf readerFlags
	rf.register(fs)
	asJSON := fs.Bool("json", false, "one JSON line per image")
	annotate := fs.String("annotate", "", "write annotated copies (outline, kind, face, confidence per die) as PNG into this folder")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return Exit(2, "")
	}
	r, err := rf.reader()
	if err != nil {
		return err
	}
	if *annotate != "" {
		if err := os.MkdirAll(*annotate, 0o755); err != nil {
			return fmt.Errorf("annotate folder: %w", err)
		}
	}
	names := map[string]int{}
	failed := 0
	for _, file := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		img, err := decodeImage(file)
		var dice []vision.Die
		if err == nil {
			dice, err = r.Read(img)
		}
		if err != nil {
			failed++
			if *asJSON {
				b, _ := json.Marshal(jsonReadError{File: file, Error: err.Error()})
				fmt.Fprintln(env.Stdout, string(b))
			} else {
				fmt.Fprintf(env.Stdout, "%s: error: %v\n", file, err)
			}
			continue
		}
		if *asJSON {
			b, _ := json.Marshal(jsonRead{File: file, Dice: toJSONDice(dice)})
			fmt.Fprintln(env.Stdout, string(b))
		} else {
			parts := make([]string, 0, len(dice))
			for _, d := range dice {
				parts = append(parts, fmt.Sprintf("%s [%d,%d,%d,%d]", vision.Label(d), d.Box.Min.X, d.Box.Min.Y, d.Box.Dx(), d.Box.Dy()))
			}
			if len(parts) == 0 {
				parts = append(parts, "no dice")
			}
			fmt.Fprintf(env.Stdout, "%s: %s\n", file, strings.Join(parts, "; "))
		}
		if *annotate != "" {
			if err := writeAnnotated(*annotate, file, names, vision.Annotate(img, dice)); err != nil {
				return err
			}
		}
	}
	if failed > 0 {
		return Exit(1, fmt.Sprintf("towerd read: %d of %d images could not be read", failed, fs.NArg()))
	}
	return nil
}

// decodeImage opens and decodes a JPEG or PNG photo.
func decodeImage(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return img, nil
}

// writeAnnotated writes DIR/<name>.png, numbering repeated names.
func writeAnnotated(dir, file string, names map[string]int, img image.Image) error {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	names[base]++
	if n := names[base]; n > 1 {
		base = fmt.Sprintf("%s-%d", base, n)
	}
	out := filepath.Join(dir, base+".png")
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("annotate: %w", err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return fmt.Errorf("annotate %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("annotate %s: %w", out, err)
	}
	return nil
}
