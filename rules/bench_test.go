package rules

import "testing"

var benchRequests = map[string]string{
	"dice":       `{"system":"dice","expr":"2d6+1d8-1"}`,
	"dsdn":       `{"system":"dsdn","roll":"attack","target":14,"advantage":1,"modifier":3}`,
	"dsdn_dmg":   `{"system":"dsdn","roll":"damage","expr":"2d6+3","apply":{"kind":"creature","hp":20,"ap":4,"temp_hp":2}}`,
	"d20tn":      `{"system":"d20tn","trauma":2,"skill_rank":3,"domains":2,"advantage":true}`,
	"d4tactical": `{"system":"d4tactical","rad":4,"boon":1,"test":"cdt","dt":12,"effect":8}`,
	"ydin":       `{"system":"ydin","attribute":4,"skill":2,"modifiers":[1]}`,
}

// BenchmarkResolve measures resolving a parsed request from its faces (the
// odds are computed once per request and cached, as in the daemon).
func BenchmarkResolve(b *testing.B) {
	for _, name := range []string{"dice", "dsdn", "dsdn_dmg", "d20tn", "d4tactical", "ydin"} {
		b.Run(name, func(b *testing.B) {
			r, err := ParseRequest([]byte(benchRequests[name]))
			if err != nil {
				b.Fatal(err)
			}
			var faces []int
			for _, d := range r.Plan().Dice {
				faces = append(faces, (int(d)+1)/2)
			}
			if _, err := r.Resolve(faces); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Resolve(faces); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParse measures decoding and validating a request.
func BenchmarkParse(b *testing.B) {
	data := []byte(benchRequests["ydin"])
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := ParseRequest(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOdds measures the exact odds of the large requests
// (target: each well under 50 ms).
func BenchmarkOdds(b *testing.B) {
	for name, js := range map[string]string{
		"20d20kh3+10d12": `{"system":"dice","expr":"20d20kh3+10d12"}`,
		"30d4":           `{"system":"dice","expr":"30d4"}`,
		"ydin_net+3":     `{"system":"ydin","attribute":4,"skill":3,"modifiers":[3]}`,
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				r, err := ParseRequest([]byte(js))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.Odds(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
