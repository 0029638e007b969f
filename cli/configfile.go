package cli

import (
	"errors"
	"io/fs"

	"github.com/towerd/towerd/config"
)

// configFlagHelp is the help of every command's --config flag.
const configFlagHelp = "configuration file (default " + config.DefaultPath + ", or the defaults when it does not exist)"

// loadConfig loads the file given with --config, or config.DefaultPath when
// path is empty, and then the defaults when that file does not exist (a
// fresh machine): defaulted says so. A file named with --config must exist.
func loadConfig(path string) (cfg *config.Config, file string, defaulted bool, err error) {
	file = path
	if file == "" {
		file = config.DefaultPath
	}
	cfg, err = config.Load(file)
	if path == "" && errors.Is(err, fs.ErrNotExist) {
		return config.Default(), file, true, nil
	}
	return cfg, file, false, err
}
