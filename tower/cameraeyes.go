package tower

import (
	"context"
	"errors"
	"fmt"
	"image"
	"slices"
	"time"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/vision/camera"
)

// FrameReader reads the dice in one photo of the tray (the vision reader,
// through VisionReader). physical are the dice dropped: a reader looks
// only for their kinds, so a shadow or a crumb is not taken for a kind
// that cannot be there.
type FrameReader interface {
	ReadFrame(img image.Image, physical []rules.Die) ([]Seen, error)
}

// CameraEyes watch the tray through a camera: they wait for the dice to
// settle, then read the last still frames and take the dice only when the
// frames agree.
type CameraEyes struct {
	Source camera.Source
	Settle camera.SettleConfig
	Reader FrameReader
	// Votes is how many of the last still frames are read; every one must
	// give the same dice (0: 2). A die whose reading flickers between
	// frames is not trusted.
	Votes int
	// Stage, when set, is told the dice dropped before the tumble: the
	// simulated camera uses it to stage the scene. Nil on a real tower.
	Stage func(physical []rules.Die) error
}

var (
	_ Eyes   = (*CameraEyes)(nil)
	_ Prober = (*CameraEyes)(nil)
)

// Look implements Eyes.
func (c *CameraEyes) Look(ctx context.Context, physical []rules.Die, settled func()) (Look, error) {
	if c.Stage != nil {
		if len(physical) == 0 {
			physical = FreeDice
		}
		if err := c.Stage(physical); err != nil {
			return Look{}, fmt.Errorf("%w: stage the simulated tray: %v", ErrHardware, err)
		}
	}
	cfg := c.Settle
	cfg.RequireMotion = true
	s, err := camera.WaitSettled(ctx, c.Source, cfg)
	switch {
	case errors.Is(err, camera.ErrTimeout):
		return Look{Settle: s.Elapsed}, fmt.Errorf("%w after %v", ErrSettle, s.Elapsed.Round(time.Millisecond))
	case errors.Is(err, camera.ErrHardware):
		return Look{}, fmt.Errorf("%w: %v", ErrHardware, err)
	case err != nil:
		return Look{}, err
	}
	settled()
	votes := c.Votes
	if votes <= 0 {
		votes = 2
	}
	frames := s.Frames[max(0, len(s.Frames)-votes):]
	if len(frames) == 0 {
		return Look{}, fmt.Errorf("%w: camera gave no still frame", ErrHardware)
	}
	var first []Seen
	for i := len(frames) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return Look{}, err
		}
		seen, err := c.Reader.ReadFrame(frames[i].Image, physical)
		if err != nil {
			return Look{}, &Misread{Reason: err.Error()}
		}
		if first == nil {
			first = seen
			if first == nil {
				first = []Seen{}
			}
			continue
		}
		if !sameDice(first, seen) {
			return Look{}, &Misread{Reason: "the dice read differently in consecutive still frames"}
		}
	}
	return Look{Dice: first, Settle: s.Elapsed}, nil
}

// sameDice compares two readings by kind and face, whatever the order.
func sameDice(a, b []Seen) bool {
	key := func(s []Seen) []string {
		k := make([]string, len(s))
		for i, d := range s {
			f := "?"
			if d.Face != nil && !d.Cocked {
				f = fmt.Sprint(*d.Face)
			}
			k[i] = fmt.Sprintf("%d:%s", int(d.Die), f)
		}
		slices.Sort(k)
		return k
	}
	return slices.Equal(key(a), key(b))
}

// Probe captures one frame: a camera that delivers one works again.
func (c *CameraEyes) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := c.Source.Capture(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrHardware, err)
	}
	return nil
}
