package rules

import (
	"encoding/json"
	"sync"
	"time"
)

// Request is a decoded and validated roll request.
type Request struct {
	ID     string
	Label  string
	System string
	// Echo is the request object as given, without id and label; results
	// carry it as "request".
	Echo json.RawMessage

	g game

	oddsOnce sync.Once
	odds     *Odds
	oddsErr  error
}

// game is one system's reading of a request.
type game interface {
	plan() Plan
	// need returns the dice still needed after faces (plan dice first),
	// nil when faces are complete.
	need(faces []int) []Die
	resolve(faces []int, label string) (Outcome, error)
	odds() (*Odds, error)
}

// Plan returns the dice the request needs.
func (r *Request) Plan() Plan { return r.g.plan() }

// Need returns the dice still needed once faces (in plan order, follow-ups
// last) have been read: nil when the roll is complete. Faces are not
// checked here; Resolve checks them.
func (r *Request) Need(faces []int) []Die { return r.g.need(faces) }

// Resolve turns faces (plan order, follow-ups last) into the outcome. Faces
// outside their die, too few or too many are a *Error with CodeBadRequest
// and Field "faces".
func (r *Request) Resolve(faces []int) (Outcome, error) {
	o, err := r.g.resolve(faces, r.Label)
	if err != nil {
		return Outcome{}, err
	}
	if od, ok := r.outcomeOdds(); ok {
		o.Odds = od
	}
	return o, nil
}

// Odds returns the exact odds of the request, computed once.
func (r *Request) Odds() (*Odds, error) {
	r.oddsOnce.Do(func() { r.odds, r.oddsErr = r.g.odds() })
	return r.odds, r.oddsErr
}

// outcomeOdds is the odds field of a result: only for requests compared
// against a target.
func (r *Request) outcomeOdds() (*OutcomeOdds, bool) {
	if !r.hasTarget() {
		return nil, false
	}
	od, err := r.Odds()
	if err != nil {
		return nil, false
	}
	return &od.Outcomes, true
}

// NewResult wraps an outcome in the wire envelope.
func NewResult(r *Request, o Outcome, tower string, seq uint64, at time.Time, source string) Result {
	return Result{
		V: 1, ID: r.ID, Label: r.Label, Tower: tower, Seq: seq, At: at.UTC(),
		Source: source, System: r.System, Request: r.Echo, Outcome: o,
	}
}

// NewErrorMsg builds the wire error for err (a *Error keeps its code and
// field; anything else is reported with fallbackCode).
func NewErrorMsg(id, tower string, at time.Time, err error, fallbackCode string) ErrorMsg {
	m := ErrorMsg{V: 1, ID: id, Tower: tower, At: at.UTC(), Code: fallbackCode, Message: err.Error()}
	if e, ok := err.(*Error); ok {
		m.Code, m.Field, m.Message = e.Code, e.Field, e.Message
	}
	return m
}
