package mqtt_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/towerd/towerd/internal/cputime"
	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/mqtt/mqtttest"
)

// BenchmarkRollsOverLoopback measures the whole MQTT path with a zero-time
// simulated tower: a bot publishes requests to the embedded broker over
// loopback TCP (keeping `window` unanswered), towerd journals them, a
// roller resolves them with random faces, each result is synced to the
// outbox and published, and the bot receives it. Reported: rolls/s,
// p50/p99 latency from publish to result, heap in use after the run, and
// the CPU time all three (broker, towerd, bot) used per roll.
// TOWERD_BENCH_DIR puts the state dir on another file system (e.g. /dev/shm
// to take the disk's sync time out).
func BenchmarkRollsOverLoopback(b *testing.B) {
	for _, window := range []int{1, 32} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) { benchRolls(b, window) })
	}
}

func benchRolls(b *testing.B, window int) {
	log := slog.New(slog.DiscardHandler)
	broker, err := mqtt.StartBroker(context.Background(), mqtt.Config{Listen: "127.0.0.1:0"}, log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { broker.Close() }) // after the bot has disconnected (cleanups run last first)
	dir := b.TempDir()
	if d := os.Getenv("TOWERD_BENCH_DIR"); d != "" {
		if dir, err = os.MkdirTemp(d, "mqttbench"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	c, err := mqtt.Connect(context.Background(), broker.ClientConfig(mqtt.Config{TowerID: "bench"}), dir, log)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&mqtttest.Roller{Client: c, Rand: rand.New(rand.NewPCG(1, 2)), Parallel: window}).Run()
	}()
	bot := mqtttest.NewBot(b, broker.URL(), "dicetower/bench", mqtttest.BotOptions{ClientID: fmt.Sprint("benchbot-", window)})
	bot.WaitStatus(guard, "online")

	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("b%d", i)
	}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Now()
	for i, id := range ids {
		if i >= window {
			bot.WaitAnswered(guard, ids[i-window])
		}
		bot.SendDice(id, "2d6")
	}
	bot.WaitAnswered(guard, ids...)
	elapsed := time.Since(start)
	b.StopTimer()
	// CPU time of the broker, towerd and the bot together, per roll.
	cputime.Report(b, cpu0)

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, id := range ids {
		if len(bot.Errors(id)) > 0 {
			b.Fatalf("%s: %s", id, bot.Errors(id)[0].Raw)
		}
	}
	lat := bot.Latencies()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rolls/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	// The slowest: on a VM whose host stops it for seconds, compare it
	// with the stalls a plain loop sees (the closing notes say how).
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c.Close(ctx)
	<-done
}
