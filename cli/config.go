package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/towerd/towerd/config"
)

func init() {
	Register(&Command{
		Name:    "config",
		Usage:   "config check FILE | config show [--config FILE]",
		Summary: "Validate a configuration file (check: \"ok\" and exit 0, or the errors and exit 2), or print the effective configuration with defaults filled in and secrets masked (show).",
		Run:     runConfig,
	})
}

func runConfig(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 {
		return Exit(2, "towerd config: expected check FILE or show [--config FILE]")
	}
	switch args[0] {
	case "check":
		return configCheck(env, args[1:])
	case "show":
		return configShow(env, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(env.Stderr, "usage: towerd config check FILE\n       towerd config show [--config FILE]")
		return nil
	}
	return Exit(2, fmt.Sprintf("towerd config: unknown subcommand %q (check or show)", args[0]))
}

// configCheck validates everything a daemon start would: the file, and the
// requests it holds through the rules core.
func configCheck(env *Env, args []string) error {
	c := &Command{Name: "config check", Usage: "config check FILE", Summary: "Validate a configuration file: prints ok and exits 0, or prints the errors (file:line:column: key: problem) and exits 2."}
	flags := NewFlagSet(env, c)
	if err := ParseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 1 {
		flags.Usage()
		return Exit(2, "")
	}
	cfg, err := config.Load(flags.Arg(0))
	if err == nil {
		err = cfg.CheckRequests()
	}
	if err != nil {
		return Exit(2, err.Error())
	}
	fmt.Fprintln(env.Stdout, "ok")
	return nil
}

// configShow prints the effective configuration. Without --config it reads
// config.DefaultPath, or shows the defaults when that file does not exist.
func configShow(env *Env, args []string) error {
	c := &Command{Name: "config show", Usage: "config show [--config FILE]", Summary: "Print the effective configuration: defaults and derived keys filled in, secrets masked."}
	flags := NewFlagSet(env, c)
	path := flags.String("config", "", configFlagHelp)
	if err := ParseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		flags.Usage()
		return Exit(2, "")
	}
	cfg, file, defaulted, err := loadConfig(*path)
	if defaulted {
		fmt.Fprintf(env.Stdout, "# %s does not exist: these are the defaults\n", file)
	}
	var errs config.Errors
	if errors.As(err, &errs) {
		return Exit(2, err.Error())
	}
	if err != nil {
		return err
	}
	return cfg.Show(env.Stdout)
}
