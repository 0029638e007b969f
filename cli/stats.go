package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/towerd/towerd/config"
	"github.com/towerd/towerd/history"
)

func init() {
	Register(&Command{
		Name:    "stats",
		Usage:   "stats [--state-dir DIR] [--config FILE] [--json]",
		Summary: "Summarise the roll history: rolls per day, misread rate, settle time, and a chi-square fairness test per die kind.",
		Run:     runStats,
	})
}

func runStats(ctx context.Context, env *Env, args []string) error {
	c := commands["stats"]
	flags := NewFlagSet(env, c)
	stateDir := flags.String("state-dir", "", "state directory holding the history (default: tower.state_dir of the configuration)")
	cfgPath := flags.String("config", "", "configuration file to take tower.state_dir from (default "+config.DefaultPath+", or the defaults when it does not exist)")
	asJSON := flags.Bool("json", false, "print the statistics as one JSON object (the stats topic payload)")
	if err := ParseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		flags.Usage()
		return Exit(2, "")
	}
	dir := *stateDir
	if dir == "" {
		var err error
		if dir, err = statsStateDir(*cfgPath); err != nil {
			return err
		}
	}
	s, info, err := history.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no history: %w (is --state-dir right?)", err)
	}
	if err != nil {
		return err
	}
	for _, e := range info.Skipped {
		fmt.Fprintf(env.Stderr, "towerd stats: skipped %s\n", e)
	}
	if *asJSON {
		b, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode stats: %w", err)
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
	}
	return s.WriteReport(env.Stdout)
}

// statsStateDir is tower.state_dir of the configuration file, of
// config.DefaultPath when path is empty, or of the defaults when that file
// does not exist.
func statsStateDir(path string) (string, error) {
	cfg, _, _, err := loadConfig(path)
	if err != nil {
		return "", Exit(2, err.Error())
	}
	return cfg.Tower.StateDir, nil
}
