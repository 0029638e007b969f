package history

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/towerd/towerd/rules"
)

// Fairness verdicts.
const (
	// VerdictOK: no evidence the die is unfair (which is not proof it is fair).
	VerdictOK = "ok"
	// VerdictSuspicious: p < SuspiciousP with enough rolls — check the die.
	VerdictSuspicious = "suspicious"
	// VerdictTooFew: fewer than MinExpected rolls expected per face, where
	// the chi-square approximation is not to be trusted.
	VerdictTooFew = "too_few_rolls"
)

// Thresholds of the fairness verdict.
const (
	SuspiciousP = 0.01
	MinExpected = 5.0
)

// StatsVersion is the "v" of the stats JSON.
const StatsVersion = 1

// Stats summarises the history; it is the payload of the retained stats
// topic and what `towerd stats --json` prints. Days are UTC calendar days.
type Stats struct {
	V       int `json:"v"`
	Results int `json:"results"`
	Errors  int `json:"errors"`
	// ErrorsByCode counts errors per wire code.
	ErrorsByCode map[string]int `json:"errors_by_code"`
	// First and Last are the times of the oldest and newest records.
	First *time.Time `json:"first,omitempty"`
	Last  *time.Time `json:"last,omitempty"`
	// Days is the number of calendar days from First to Last, inclusive;
	// RollsPerDay is Results / Days.
	Days        int     `json:"days"`
	RollsPerDay float64 `json:"rolls_per_day"`
	// PerDay lists the days with records, oldest first.
	PerDay []DayCount `json:"per_day"`
	// Misreads counts misread errors; MisreadRate is the share of reads that
	// failed: Misreads / (Results + Misreads).
	Misreads    int     `json:"misreads"`
	MisreadRate float64 `json:"misread_rate"`
	Settle      Settle  `json:"settle"`
	// Dice has one entry per die kind that was physically rolled (camera or
	// sim results), in kind order.
	Dice []DieStats `json:"dice"`
	// SkippedLines counts torn and garbled history lines that were ignored.
	SkippedLines int `json:"skipped_lines"`
}

// DayCount is the records of one UTC day.
type DayCount struct {
	Date    string `json:"date"` // 2006-01-02
	Results int    `json:"results"`
	Errors  int    `json:"errors"`
}

// Settle summarises how long the dice took to come to rest, over the
// records where it was measured.
type Settle struct {
	Count  int     `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	MaxMS  int64   `json:"max_ms"`
}

// DieStats is the face counts of one physical die kind and Pearson's
// chi-square test of the hypothesis that every face is equally likely.
//
// Faces are physical: a d10 has faces 1–10 where 10 is the face printed 0;
// a d100 is the percentile die, with faces 0, 10, …, 90 (00 printed as 0) —
// a rules value 1–100 counts for its tens digit (100 for 0). The units die
// of a d% roll is a d10 and is counted there.
type DieStats struct {
	Die   rules.Die   `json:"die"`
	Rolls int         `json:"rolls"`
	Faces []FaceCount `json:"faces"`
	// Expected is the count per face of a fair die: Rolls / faces.
	Expected  float64 `json:"expected"`
	ChiSquare float64 `json:"chi_square"`
	DF        int     `json:"df"`
	// P is the chance a fair die gives a chi-square at least this large.
	P       float64 `json:"p"`
	Verdict string  `json:"verdict"`
	// Invalid counts faces outside the die that were ignored.
	Invalid int `json:"invalid,omitempty"`
}

// FaceCount is how often a face came up; Residual is (count-expected) /
// sqrt(expected), so the face a loaded die favours stands out.
type FaceCount struct {
	Face     int     `json:"face"`
	Count    int     `json:"count"`
	Residual float64 `json:"residual"`
}

// bucket maps a recorded face to its index among the die's physical faces,
// or -1 when the face is not on the die.
func bucket(d rules.Die, face int) int {
	switch d {
	case rules.D10:
		if face < 0 || face > 10 {
			return -1
		}
		if face == 10 || face == 0 {
			return 9 // face "0", counted as 10
		}
		return face - 1
	case rules.D100:
		if face < 0 || face > 100 {
			return -1
		}
		return (face % 100) / 10
	}
	if !d.Valid() || face < 1 || face > int(d) {
		return -1
	}
	return face - 1
}

// faceLabel is the face of bucket i of d.
func faceLabel(d rules.Die, i int) int {
	if d == rules.D100 {
		return i * 10
	}
	return i + 1
}

func numFaces(d rules.Die) int {
	if d == rules.D100 {
		return 10
	}
	return int(d)
}

// Accumulator builds Stats one record at a time, so a long history is
// never held in memory. The zero value is ready to use.
type Accumulator struct {
	results, errors, misreads int
	byCode                    map[string]int
	days                      map[string]*DayCount
	first, last               time.Time
	settleN                   int
	settleSum, settleMax      int64
	counts                    map[rules.Die][]int
	invalid                   map[rules.Die]int
}

// Add counts one record.
func (a *Accumulator) Add(r Record) {
	if a.byCode == nil {
		a.byCode = map[string]int{}
		a.days = map[string]*DayCount{}
		a.counts = map[rules.Die][]int{}
		a.invalid = map[rules.Die]int{}
	}
	t := r.Time.UTC()
	if a.first.IsZero() || t.Before(a.first) {
		a.first = t
	}
	if t.After(a.last) {
		a.last = t
	}
	date := t.Format(time.DateOnly)
	day := a.days[date]
	if day == nil {
		day = &DayCount{Date: date}
		a.days[date] = day
	}
	switch r.Kind {
	case KindResult:
		a.results++
		day.Results++
		if r.Source != rules.SourceManual {
			for _, f := range r.Faces {
				a.addFace(f)
			}
		}
	case KindError:
		a.errors++
		day.Errors++
		a.byCode[r.Code]++
		if r.Code == rules.CodeMisread {
			a.misreads++
		}
	}
	if r.SettleMS > 0 {
		a.settleN++
		a.settleSum += r.SettleMS
		a.settleMax = max(a.settleMax, r.SettleMS)
	}
}

func (a *Accumulator) addFace(f Face) {
	b := bucket(f.Die, f.Face)
	if b < 0 {
		if f.Die.Valid() {
			a.invalid[f.Die]++
		}
		return
	}
	c := a.counts[f.Die]
	if c == nil {
		c = make([]int, numFaces(f.Die))
		a.counts[f.Die] = c
	}
	c[b]++
}

// Stats returns the statistics so far.
func (a *Accumulator) Stats() Stats {
	s := Stats{
		V: StatsVersion, Results: a.results, Errors: a.errors, ErrorsByCode: map[string]int{},
		PerDay: []DayCount{}, Misreads: a.misreads, Dice: []DieStats{},
	}
	for c, n := range a.byCode {
		s.ErrorsByCode[c] = n
	}
	if !a.first.IsZero() {
		first, last := a.first, a.last
		s.First, s.Last = &first, &last
		d0 := time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC)
		d1 := time.Date(last.Year(), last.Month(), last.Day(), 0, 0, 0, 0, time.UTC)
		s.Days = int(math.Round(d1.Sub(d0).Hours()/24)) + 1
		s.RollsPerDay = float64(a.results) / float64(s.Days)
	}
	for _, d := range a.days {
		s.PerDay = append(s.PerDay, *d)
	}
	sort.Slice(s.PerDay, func(i, j int) bool { return s.PerDay[i].Date < s.PerDay[j].Date })
	if reads := a.results + a.misreads; reads > 0 {
		s.MisreadRate = float64(a.misreads) / float64(reads)
	}
	if a.settleN > 0 {
		s.Settle = Settle{Count: a.settleN, MeanMS: float64(a.settleSum) / float64(a.settleN), MaxMS: a.settleMax}
	}
	for _, d := range rules.Kinds {
		if c := a.counts[d]; c != nil || a.invalid[d] > 0 {
			ds := FairnessTest(d, c)
			ds.Invalid = a.invalid[d]
			s.Dice = append(s.Dice, ds)
		}
	}
	return s
}

// FairnessTest runs the chi-square test on the face counts of one die kind
// (counts[i] is the number of times bucket i came up; see DieStats for the
// order). Missing trailing counts are zero.
func FairnessTest(d rules.Die, counts []int) DieStats {
	k := numFaces(d)
	ds := DieStats{Die: d, Faces: make([]FaceCount, k), DF: k - 1, Verdict: VerdictTooFew, P: 1}
	for i := range k {
		ds.Faces[i].Face = faceLabel(d, i)
		if i < len(counts) {
			ds.Faces[i].Count = counts[i]
			ds.Rolls += counts[i]
		}
	}
	if ds.Rolls == 0 {
		return ds
	}
	e := float64(ds.Rolls) / float64(k)
	ds.Expected = e
	for i := range ds.Faces {
		diff := float64(ds.Faces[i].Count) - e
		ds.ChiSquare += diff * diff / e
		ds.Faces[i].Residual = diff / math.Sqrt(e)
	}
	ds.P = ChiSquareSF(ds.ChiSquare, ds.DF)
	switch {
	case e < MinExpected:
		ds.Verdict = VerdictTooFew
	case ds.P < SuspiciousP:
		ds.Verdict = VerdictSuspicious
	default:
		ds.Verdict = VerdictOK
	}
	return ds
}

// Compute returns the statistics of recs.
func Compute(recs []Record) Stats {
	var a Accumulator
	for _, r := range recs {
		a.Add(r)
	}
	return a.Stats()
}

// Load scans the history in dir and returns its statistics.
func Load(dir string) (Stats, ScanInfo, error) {
	var a Accumulator
	info, err := Scan(dir, func(r Record) error { a.Add(r); return nil })
	if err != nil {
		return Stats{}, info, err
	}
	s := a.Stats()
	s.SkippedLines = info.Torn + info.Garbled
	return s, info, nil
}

// reportDays is how many recent days the text report lists.
const reportDays = 14

// WriteReport writes s for a person to read.
func (s *Stats) WriteReport(w io.Writer) error {
	var b strings.Builder
	if s.First == nil {
		b.WriteString("no rolls recorded yet\n")
		if s.SkippedLines > 0 {
			fmt.Fprintf(&b, "(%d unreadable history lines skipped)\n", s.SkippedLines)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "history: %d results, %d errors, %s to %s (UTC)\n",
		s.Results, s.Errors, s.First.Format(time.DateOnly), s.Last.Format(time.DateOnly))
	if s.SkippedLines > 0 {
		fmt.Fprintf(&b, "skipped: %d unreadable history lines\n", s.SkippedLines)
	}
	fmt.Fprintf(&b, "rolls per day: %.1f over %d days\n", s.RollsPerDay, s.Days)
	days := s.PerDay
	if len(days) > reportDays {
		days = days[len(days)-reportDays:]
	}
	for _, d := range days {
		fmt.Fprintf(&b, "  %s  %5d results  %4d errors\n", d.Date, d.Results, d.Errors)
	}
	fmt.Fprintf(&b, "misread rate: %.2f%% (%d misreads, %d results)\n", 100*s.MisreadRate, s.Misreads, s.Results)
	if s.Settle.Count > 0 {
		fmt.Fprintf(&b, "settle time: mean %.0f ms, max %d ms (%d rolls)\n", s.Settle.MeanMS, s.Settle.MaxMS, s.Settle.Count)
	} else {
		b.WriteString("settle time: not measured\n")
	}
	if len(s.ErrorsByCode) > 0 {
		codes := make([]string, 0, len(s.ErrorsByCode))
		for c := range s.ErrorsByCode {
			codes = append(codes, c)
		}
		sort.Strings(codes)
		b.WriteString("errors by code:")
		for _, c := range codes {
			fmt.Fprintf(&b, " %s %d", c, s.ErrorsByCode[c])
		}
		b.WriteString("\n")
	}
	if len(s.Dice) == 0 {
		b.WriteString("fairness: no camera or sim rolls yet\n")
	} else {
		fmt.Fprintf(&b, "fairness (chi-square test per die kind; suspicious when p < %g):\n", SuspiciousP)
		fmt.Fprintf(&b, "  %-5s %7s %9s %9s %3s %8s  %s\n", "die", "rolls", "expected", "chi2", "df", "p", "verdict")
		for _, d := range s.Dice {
			fmt.Fprintf(&b, "  %-5s %7d %9.1f %9.2f %3d %8.4f  %s\n", d.Die, d.Rolls, d.Expected, d.ChiSquare, d.DF, d.P, d.Verdict)
			b.WriteString("        faces:")
			for _, f := range d.Faces {
				fmt.Fprintf(&b, " %s:%d", faceText(d.Die, f.Face), f.Count)
			}
			b.WriteString("\n")
			if d.Verdict == VerdictSuspicious {
				hi, lo := d.Faces[0], d.Faces[0]
				for _, f := range d.Faces {
					if f.Residual > hi.Residual {
						hi = f
					}
					if f.Residual < lo.Residual {
						lo = f
					}
				}
				fmt.Fprintf(&b, "        most over: %s (%+.1f sd), most under: %s (%+.1f sd)\n",
					faceText(d.Die, hi.Face), hi.Residual, faceText(d.Die, lo.Face), lo.Residual)
			}
			if d.Invalid > 0 {
				fmt.Fprintf(&b, "        %d faces outside the die ignored\n", d.Invalid)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// faceText prints a face as it is printed on the die (the percentile die's
// faces as 00, 10, …).
func faceText(d rules.Die, face int) string {
	if d == rules.D100 {
		return fmt.Sprintf("%02d", face)
	}
	return fmt.Sprint(face)
}
