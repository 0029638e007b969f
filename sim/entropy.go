// Package sim stands in for the physical tower: an entropy source that rolls
// fair dice, and (in subpackages) fake hardware and rendered tray images.
package sim

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/rand/v2"
	"sync"
)

// Source rolls simulated dice. Faces are unbiased for every die size:
// math/rand/v2's IntN rejects the biased range instead of taking a modulo.
// Safe for concurrent use.
type Source struct {
	mu sync.Mutex
	r  *rand.Rand
}

// cryptoSource feeds math/rand/v2 from the operating system's CSPRNG.
type cryptoSource struct{}

func (cryptoSource) Uint64() uint64 {
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		// crypto/rand.Read does not fail on supported platforms (Go ≥ 1.24
		// crashes the program instead); keep the signature honest anyway.
		panic("sim: crypto/rand: " + err.Error())
	}
	return binary.LittleEndian.Uint64(b[:])
}

// NewSource returns the default source, backed by crypto/rand.
func NewSource() *Source { return &Source{r: rand.New(cryptoSource{})} }

// NewSeeded returns a reproducible source: the same seed gives the same
// faces on every machine (ChaCha8 keyed by the seed).
func NewSeeded(seed uint64) *Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	copy(key[8:], "towerd simulated dice tower....")
	return &Source{r: rand.New(rand.NewChaCha8(key))}
}

// Face rolls one die with the given number of sides: 1..sides.
func (s *Source) Face(sides int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.IntN(sides) + 1
}

// Faces rolls one die of each size in sides.
func (s *Source) Faces(sides []int) []int {
	out := make([]int, len(sides))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range sides {
		out[i] = s.r.IntN(n) + 1
	}
	return out
}
