//go:build !race

package numeral

const raceOn = false
