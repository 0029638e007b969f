package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim"
)

func init() {
	Register(&Command{
		Name:    "roll",
		Usage:   "roll [--faces F,F,...] [--seed N] [--id TOWER] REQUEST",
		Summary: "Resolve a request (JSON, or - for stdin) with faces given by hand or rolled by the simulated source; prints one result line.",
		Run:     runRoll,
	})
	Register(&Command{
		Name:    "odds",
		Usage:   "odds REQUEST",
		Summary: "Print the exact probability of every outcome and every total of a request (JSON, or - for stdin).",
		Run:     runOdds,
	})
	Register(&Command{
		Name:    "plan",
		Usage:   "plan REQUEST",
		Summary: "Print the dice a request needs (JSON, or - for stdin).",
		Run:     runPlan,
	})
}

// readRequest takes the single REQUEST argument: JSON text or "-".
func readRequest(env *Env, args []string) ([]byte, error) {
	if len(args) != 1 {
		return nil, Exit(2, "towerd: expected one REQUEST argument (JSON text, or - for standard input)")
	}
	if args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, rules.MaxRequestBytes+1))
		if err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		return b, nil
	}
	return []byte(args[0]), nil
}

// requestError prints a contract error line and exits 2.
func requestError(id, tower string, err error) error {
	m := rules.NewErrorMsg(id, tower, time.Now(), err, rules.CodeBadRequest)
	b, _ := json.Marshal(m)
	return Exit(2, string(b))
}

// cliTower is the tower id of what roll, odds and plan print (roll's --id
// changes it): config's default, so their errors read as the daemon's do.
const cliTower = "tower-1"

func parseRequestArg(env *Env, args []string, tower string) (*rules.Request, error) {
	data, err := readRequest(env, args)
	if err != nil {
		return nil, err
	}
	req, err := rules.ParseRequest(data)
	if err != nil {
		// The error carries the id the request was sent with, as over MQTT.
		return nil, requestError(rules.PeekID(data), tower, err)
	}
	return req, nil
}

func parseFaces(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return []int{}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, &rules.Error{Code: rules.CodeBadRequest, Field: "faces",
				Message: fmt.Sprintf("faces[%d] must be an integer, got %q", i, strings.TrimSpace(p))}
		}
		out[i] = n
	}
	return out, nil
}

func runRoll(ctx context.Context, env *Env, args []string) error {
	c := commands["roll"]
	fs := NewFlagSet(env, c)
	facesFlag := fs.String("faces", "", "faces in plan order, follow-up dice last (comma-separated); source becomes manual")
	seed := fs.String("seed", "", "seed for a reproducible simulated roll")
	tower := fs.String("id", cliTower, "tower id written into the result")
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	req, err := parseRequestArg(env, fs.Args(), *tower)
	if err != nil {
		return err
	}
	if req.Plan().Free {
		return requestError(req.ID, *tower, &rules.Error{Code: rules.CodeBadRequest, Field: "expr",
			Message: "expr is required on the command line (a free roll reads whatever dice land in the tower)"})
	}
	var faces []int
	source := rules.SourceSim
	setFlags := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { setFlags[f.Name] = true })
	if setFlags["faces"] {
		if setFlags["seed"] {
			return Exit(2, "towerd roll: --faces and --seed do not go together")
		}
		if faces, err = parseFaces(*facesFlag); err != nil {
			return requestError(req.ID, *tower, err)
		}
		source = rules.SourceManual
	} else {
		src := sim.NewSource()
		if setFlags["seed"] {
			n, err := strconv.ParseUint(*seed, 10, 64)
			if err != nil {
				return Exit(2, fmt.Sprintf("towerd roll: --seed must be a non-negative integer, got %q", *seed))
			}
			src = sim.NewSeeded(n)
		}
		faces = rollAll(req, src)
	}
	out, err := req.Resolve(faces)
	if err != nil {
		return requestError(req.ID, *tower, err)
	}
	res := rules.NewResult(req, out, *tower, 0, time.Now(), source)
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	fmt.Fprintln(env.Stdout, string(b))
	return nil
}

// rollAll rolls the plan and any follow-up dice it asks for.
func rollAll(req *rules.Request, src *sim.Source) []int {
	var faces []int
	for need := req.Need(nil); len(need) > 0; need = req.Need(faces) {
		for _, d := range need {
			faces = append(faces, src.Face(int(d)))
		}
	}
	return faces
}

func runOdds(ctx context.Context, env *Env, args []string) error {
	return printFor(env, "odds", args, func(req *rules.Request) (any, error) {
		od, err := req.Odds()
		if err != nil {
			return nil, requestError(req.ID, cliTower, err)
		}
		return od, nil
	})
}

func runPlan(ctx context.Context, env *Env, args []string) error {
	return printFor(env, "plan", args, func(req *rules.Request) (any, error) { return req.Plan(), nil })
}

// printFor runs command name (odds, plan): it reads the request in args
// and prints what answer makes of it as one line of JSON.
func printFor(env *Env, name string, args []string, answer func(*rules.Request) (any, error)) error {
	fs := NewFlagSet(env, commands[name])
	if err := ParseFlags(fs, args); err != nil {
		return err
	}
	req, err := parseRequestArg(env, fs.Args(), cliTower)
	if err != nil {
		return err
	}
	v, err := answer(req)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	fmt.Fprintln(env.Stdout, string(b))
	return nil
}
