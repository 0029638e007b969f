package mqtttest

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/rules"
)

// Roll resolves req with random faces, as a tower that rolls instantly:
// the plan's dice, follow-up dice while the rules ask for them, and for a
// free roll one to three random dice.
func Roll(req *rules.Request, rng *rand.Rand) (rules.Outcome, error) {
	if req.Plan().Free {
		dice := make([]rules.DieFace, 1+rng.IntN(3))
		for i := range dice {
			d := rules.Kinds[rng.IntN(len(rules.Kinds))]
			dice[i] = rules.DieFace{Die: d, Face: 1 + rng.IntN(int(d))}
		}
		return req.ResolveFree(dice)
	}
	var faces []int
	for range 100 {
		need := req.Need(faces)
		if len(need) == 0 {
			return req.Resolve(faces)
		}
		for _, d := range need {
			faces = append(faces, 1+rng.IntN(int(d)))
		}
	}
	return rules.Outcome{}, errors.New("mqtttest: the rules keep asking for dice")
}

// Roller answers a client's requests with Roll until Requests closes.
type Roller struct {
	Client *mqtt.Client
	Rand   *rand.Rand
	// Parallel lets up to this many PublishResult calls overlap, so their
	// fdatasyncs are shared (group commit); 0 or 1 answers one at a time.
	Parallel int
	// OnAnswered, when set, is called after each successful answer.
	OnAnswered func(in *mqtt.Incoming, res rules.Result)
	// OnFailed, when set, is called when the answer could not be stored
	// (the client closed or crashed under it).
	OnFailed func(in *mqtt.Incoming, err error)

	mu sync.Mutex // guards Rand
}

// Run rolls until the client's Requests channel closes, then waits for the
// answers in flight.
func (r *Roller) Run() {
	if r.Rand == nil {
		r.Rand = rand.New(rand.NewPCG(1, 2))
	}
	sem := make(chan struct{}, max(r.Parallel, 1))
	var wg sync.WaitGroup
	for in := range r.Client.Requests() {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r.answer(in)
		})
	}
	wg.Wait()
}

func (r *Roller) answer(in *mqtt.Incoming) {
	r.mu.Lock()
	o, err := Roll(in.Request, r.Rand)
	r.mu.Unlock()
	if err != nil {
		err = r.Client.PublishError(in, rules.NewErrorMsg(in.Request.ID, r.Client.Tower(), time.Now(), err, rules.CodeMisread))
		if err != nil && r.OnFailed != nil {
			r.OnFailed(in, err)
		}
		return
	}
	res, err := r.Client.PublishResult(in, rules.NewResult(in.Request, o, r.Client.Tower(), 0, time.Now(), rules.SourceSim))
	if err != nil {
		if r.OnFailed != nil {
			r.OnFailed(in, err)
		}
		return
	}
	if r.OnAnswered != nil {
		r.OnAnswered(in, res)
	}
}
