//go:build race

package numeral

// raceOn: the race detector slows float-heavy training about tenfold, so
// the toy training is shortened and its accuracy is not checked.
const raceOn = true
