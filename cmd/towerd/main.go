// Command towerd is the controller of a physical dice tower: it rolls, reads
// and resolves dice and publishes the outcomes over MQTT.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/towerd/towerd/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.StdEnv())
	stop()
	os.Exit(code)
}
