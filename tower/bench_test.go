package tower

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim"
)

// timedEyes are entropy eyes that note when the dice were still.
type timedEyes struct {
	*EntropyEyes
	mu    sync.Mutex
	still []time.Time
}

func (e *timedEyes) Look(ctx context.Context, p []rules.Die, settled func()) (Look, error) {
	lk, err := e.EntropyEyes.Look(ctx, p, func() {
		e.mu.Lock()
		e.still = append(e.still, time.Now())
		e.mu.Unlock()
		settled()
	})
	return lk, err
}

// BenchmarkSimLatency runs the simulated tower as `towerd run --sim` does
// (the hw package's real button and motor code on fake pins, real clock,
// the MQTT client with its fsynced outbox, the embedded broker) and
// reports, per button press: press recognised (after the debounce) →
// motor start, and dice still → result received by a subscriber.
func BenchmarkSimLatency(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mc := mqtt.Config{Listen: "127.0.0.1:0", TowerID: "bench"}
	broker, err := mqtt.StartBroker(ctx, mc, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer broker.Close()
	client, err := mqtt.Connect(ctx, broker.ClientConfig(mc), b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close(context.Background())

	hc := hw.DefaultConfig()
	hc.Button.LongPress = -1 // a press counts as soon as it is down
	hc.Motor.Profile = hw.Profile{Run: time.Millisecond, Reverse: -1, Brake: -1}
	hc.Motor.DutyMax = 1
	tw, err := hwtest.NewTower(hc, clock.Real{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Close()
	var mu sync.Mutex
	var starts []time.Time
	tw.Observe(func(ev hw.MotorEvent) {
		if ev.Kind == "motor_start" {
			mu.Lock()
			starts = append(starts, ev.At)
			mu.Unlock()
		}
	})

	got := make(chan time.Time, 1)
	sub := paho.NewClient(paho.NewClientOptions().AddBroker(broker.URL()).SetClientID("bench-sub"))
	if tok := sub.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		b.Fatal(tok.Error())
	}
	defer sub.Disconnect(10)
	if tok := sub.Subscribe("dicetower/bench/result", 1, func(_ paho.Client, m paho.Message) {
		var r rules.Result
		if json.Unmarshal(m.Payload(), &r) == nil && !m.Retained() {
			select {
			case got <- time.Now():
			default: // a QoS 1 duplicate
			}
		}
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		b.Fatal(tok.Error())
	}

	eyes := &timedEyes{EntropyEyes: NewEntropyEyes(sim.NewSeeded(1))}
	def, _ := rules.ParseRequest([]byte(`{"system":"dice","expr":"2d6"}`))
	// Presses go straight to the loop: the debounce (button.debounce, 30 ms
	// by default) comes before this and is the same for every press.
	button := make(chan hw.ButtonEvent)
	l, err := New(Config{Tower: "bench", Default: def, AutoRoll: true, MaxRetries: 0, Source: rules.SourceSim},
		tw.Motor, button, eyes, client, nil)
	if err != nil {
		b.Fatal(err)
	}
	go l.Run(ctx)

	var pressed, toMotor, toResult []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		button <- hw.ButtonEvent{Kind: hw.Press, At: t0}
		var recv time.Time
		select {
		case recv = <-got:
		case <-time.After(30 * time.Second): // failure guard
			b.Fatalf("no result after press %d; loop state %v", len(pressed), must(l.State()))
		}
		mu.Lock()
		start := starts[len(starts)-1]
		mu.Unlock()
		eyes.mu.Lock()
		still := eyes.still[len(eyes.still)-1]
		eyes.mu.Unlock()
		pressed = append(pressed, recv.Sub(t0))
		toMotor = append(toMotor, start.Sub(t0))
		toResult = append(toResult, recv.Sub(still))
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, name+"-p99-ms")
	}
	report("press-motor", toMotor)
	report("still-result", toResult)
	report("press-result", pressed)
}

func must(s, why string) string { return s + " " + why }
