// Package cli holds towerd's subcommands: each file registers one command,
// parses its flags and calls into the packages that do the work.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
)

// Env is what a command may touch of the outside world; tests pass buffers.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Log    *slog.Logger
}

// StdEnv is the process's own standard streams with a text logger on stderr.
func StdEnv() *Env {
	return &Env{
		Stdin:  os.Stdin,
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Log:    slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
}

// Command is one towerd subcommand.
type Command struct {
	Name    string
	Usage   string // e.g. "roll [--faces F,F,...] [--seed N] REQUEST"
	Summary string // one line for the command list
	// Run executes the command. A returned *ExitError sets the exit code;
	// any other error exits 1 after printing "towerd NAME: err".
	Run func(ctx context.Context, env *Env, args []string) error
}

// ExitError ends a command with Code; Msg, when set, is printed as is on
// standard error (already formatted by the command, e.g. a JSON error line).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d: %s", e.Code, e.Msg) }

// Exit returns an *ExitError.
func Exit(code int, msg string) error { return &ExitError{Code: code, Msg: msg} }

var commands = map[string]*Command{}

// Register adds a command; called from init functions of this package.
func Register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// NewFlagSet returns a flag set for c that prints its usage to env.Stderr
// and returns errors instead of exiting.
func NewFlagSet(env *Env, c *Command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "usage: towerd %s\n\n%s\n", c.Usage, c.Summary)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(env.Stderr)
		if b.Len() > 0 {
			fmt.Fprintf(env.Stderr, "\nflags:\n%s", b.String())
		}
	}
	return fs
}

// ParseFlags parses args with fs; --help exits 0, a bad flag exits 2.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Exit(0, "")
		}
		return Exit(2, "")
	}
	return nil
}

func usage(env *Env) {
	fmt.Fprintln(env.Stderr, "usage: towerd COMMAND [flags] [args]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(env.Stderr, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(env.Stderr, "\nRun 'towerd COMMAND --help' for a command's flags.")
}

// Main runs the command named by args[0] and returns the process exit code.
func Main(ctx context.Context, args []string, env *Env) int {
	if len(args) == 0 {
		usage(env)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(env)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "towerd: unknown command %q\n", args[0])
		usage(env)
		return 2
	}
	err := c.Run(ctx, env, args[1:])
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintln(env.Stderr, ee.Msg)
		}
		return ee.Code
	}
	fmt.Fprintf(env.Stderr, "towerd %s: %v\n", c.Name, err)
	return 1
}
