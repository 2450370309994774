package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
)

func postPlayground(t *testing.T, h http.Handler, req playgroundRequest) playgroundResponse {
	t.Helper()
	body, _ := json.Marshal(req)
	code, out := do(t, h, "POST", "/api/playground", string(body))
	if code != http.StatusOK {
		t.Fatalf("POST %s: status %d: %s", body, code, out)
	}
	var resp playgroundResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestPlayground checks the playground's answers against a bloom.Classic
// the test builds itself: each word's positions are the bits Add sets (the
// filter's bitmap with that word alone), the bits are the full filter's,
// the verdicts MayContain's, and the measured rate after each word the
// count of probe words a filter of just those words answers "maybe" for.
func TestPlayground(t *testing.T) {
	h := FilterHandler()
	fruits := []string{"apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum"}
	for _, c := range []struct {
		m      uint64
		k      int
		words  []string
		checks []string
	}{
		{64, 3, fruits, []string{"banana", "kiwi", "fig", "lime", "apple"}},
		{1, 1, []string{"a"}, []string{"b"}},
		{100, 16, append(slices.Clone(fruits), "apple", "banana"), nil}, // repeats count once
		{4096, 7, []string{"日本語", "probe-17", "x"}, []string{"probe-17", "probe-18"}},
		{50, 2, nil, []string{"nothing added"}},
	} {
		t.Run(fmt.Sprintf("m=%d,k=%d,%d words", c.m, c.k, len(c.words)), func(t *testing.T) {
			resp := postPlayground(t, h, playgroundRequest{M: c.m, K: c.k, Words: c.words, Checks: c.checks})
			var distinct []string
			for _, w := range c.words {
				if !slices.Contains(distinct, w) {
					distinct = append(distinct, w)
				}
			}
			full, _ := bloom.NewClassicSize(c.m, c.k)
			if len(resp.Words) != len(distinct) {
				t.Fatalf("%d words, want the %d distinct ones", len(resp.Words), len(distinct))
			}
			for i, w := range distinct {
				full.Add([]byte(w))
				one, _ := bloom.NewClassicSize(c.m, c.k)
				one.Add([]byte(w))
				got := resp.Words[i]
				if got.Word != w || !slices.Equal(sortedUnique(got.Positions), setBits(one)) || len(got.Positions) != c.k {
					t.Errorf("word %d: %q at %v, want %q setting bits %v (k = %d probes)", i, got.Word, got.Positions, w, setBits(one), c.k)
				}
			}
			if want := setBits(full); !slices.Equal(resp.Bits, want) {
				t.Errorf("bits %v, want %v", resp.Bits, want)
			}
			for i, w := range c.checks {
				got := resp.Checks[i]
				want := bloom.ClassicLocations(nil, bloom.Hash([]byte(w)), c.m, c.k)
				if got.Word != w || !slices.Equal(got.Positions, want) || got.Maybe == nil ||
					*got.Maybe != full.MayContain([]byte(w)) || got.Added != slices.Contains(distinct, w) {
					t.Errorf("check %q: %+v, want positions %v, maybe %v", w, got, want, full.MayContain([]byte(w)))
				}
				for j, p := range got.Positions {
					if got.Set[j] != slices.Contains(resp.Bits, p) {
						t.Errorf("check %q: bit %d set = %v, but the bits say otherwise", w, p, got.Set[j])
					}
				}
			}
			if c := full.EstimatedCount(); (resp.EstimatedCount == nil) != math.IsInf(c, 1) || resp.EstimatedCount != nil && *resp.EstimatedCount != c {
				t.Errorf("estimated count %v, want %v (null for +Inf)", resp.EstimatedCount, c)
			}
			if resp.EstimatedFPR != full.EstimatedFalsePositiveRate() {
				t.Errorf("estimated rate %v, want %v", resp.EstimatedFPR, full.EstimatedFalsePositiveRate())
			}
			// The measured rate after each prefix of the words, from a filter
			// of that prefix alone.
			if len(resp.Series) != len(distinct) {
				t.Fatalf("%d points, want one per distinct word (%d)", len(resp.Series), len(distinct))
			}
			prefix, _ := bloom.NewClassicSize(c.m, c.k)
			for i, w := range distinct {
				prefix.Add([]byte(w))
				fp, probes := 0, 0
				for j := range playgroundProbes {
					if p := probeWord(j); !slices.Contains(distinct, p) {
						probes++
						if prefix.MayContain([]byte(p)) {
							fp++
						}
					}
				}
				pt := resp.Series[i]
				if pt.N != i+1 || pt.Measured != float64(fp)/float64(probes) || pt.Formula != bloom.ClassicFalsePositiveRate(c.m, c.k, float64(i+1)) {
					t.Errorf("after %d words: %+v, want measured %d/%d and the formula's rate", i+1, pt, fp, probes)
				}
				if i == len(distinct)-1 && (resp.FalsePositives != fp || resp.Probes != probes) {
					t.Errorf("false positives %d of %d, want %d of %d", resp.FalsePositives, resp.Probes, fp, probes)
				}
			}
		})
	}
}

// setBits lists the bits f has set, ascending, read from its bitmap.
func setBits(f *bloom.Classic) []uint64 {
	bm := f.AppendBitmap(nil)
	out := []uint64{}
	for i := range f.Bits() {
		if bm[i/8]&(0x80>>(i%8)) != 0 {
			out = append(out, i)
		}
	}
	return out
}

func sortedUnique(s []uint64) []uint64 {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// TestPlaygroundRefusals sends malformed and oversized requests: each is
// refused with its status and a message naming what was wrong.
func TestPlaygroundRefusals(t *testing.T) {
	words := func(n int, w string) string {
		b, _ := json.Marshal(slices.Repeat([]string{w}, n))
		return string(b)
	}
	big := `{"m":64,"k":3,"words":["` + strings.Repeat("a", MaxBodyBytes) + `"]}`
	checkRefusals(t, FilterHandler(), []refusal{
		{"GET", "/api/playground", "", http.StatusMethodNotAllowed, "use POST"},
		{"PUT", "/api/playground", `{"m":64,"k":3}`, http.StatusMethodNotAllowed, "use POST"},
		{"POST", "/api/playground", "", http.StatusBadRequest, "the request is empty: want a JSON object with m, k, words and checks"},
		{"POST", "/api/playground", `{"m":64,`, http.StatusBadRequest, "the request's JSON ends before its object does"},
		{"POST", "/api/playground", `{"m":64,"k":nope}`, http.StatusBadRequest, "the request is not valid JSON (at byte 14)"},
		{"POST", "/api/playground", `[1,2]`, http.StatusBadRequest, "want a JSON object with m, k, words and checks"},
		{"POST", "/api/playground", `{"m":64,"k":3,"extra":1}`, http.StatusBadRequest, "unknown field"},
		{"POST", "/api/playground", `{"m":64,"k":3}{"m":1}`, http.StatusBadRequest, "more than one JSON value"},
		{"POST", "/api/playground", `{"m":-1,"k":3}`, http.StatusBadRequest, "m: want a whole number of bits, got number -1"},
		{"POST", "/api/playground", `{"m":"64","k":3}`, http.StatusBadRequest, "m: want a whole number of bits, got string"},
		{"POST", "/api/playground", `{"m":0,"k":3}`, http.StatusBadRequest, "m = 0"},
		{"POST", "/api/playground", `{"m":4097,"k":3}`, http.StatusBadRequest, "m = 4097: must be in [1, 4096]"},
		{"POST", "/api/playground", `{"m":18446744073709551615,"k":3}`, http.StatusBadRequest, "must be in [1, 4096]"},
		{"POST", "/api/playground", `{"m":64,"k":0}`, http.StatusBadRequest, "k = 0"},
		{"POST", "/api/playground", `{"m":64,"k":17}`, http.StatusBadRequest, "k = 17: must be in [1, 16]"},
		{"POST", "/api/playground", `{"m":64,"k":3,"words":[""]}`, http.StatusBadRequest, "want 1 to 64 bytes"},
		{"POST", "/api/playground", `{"m":64,"k":3,"checks":["` + strings.Repeat("é", 33) + `"]}`, http.StatusBadRequest, "want 1 to 64 bytes"},
		{"POST", "/api/playground", `{"m":64,"k":3,"words":` + words(MaxWords+1, "w") + `}`, http.StatusBadRequest, "words: 1001, more than the 1000"},
		{"POST", "/api/playground", `{"m":64,"k":3,"checks":` + words(MaxChecks+1, "w") + `}`, http.StatusBadRequest, "checks: 101, more than the 100"},
		{"POST", "/api/playground", `{"m":64,"k":3,"words":[1]}`, http.StatusBadRequest, "words: want"},
		{"POST", "/api/playground", big, http.StatusRequestEntityTooLarge, "more than 131072 bytes"},
	})
	// At the limits, a request is served.
	resp := postPlayground(t, FilterHandler(), playgroundRequest{M: MaxPlaygroundBits, K: MaxPlaygroundProbes,
		Words: slices.Repeat([]string{strings.Repeat("w", MaxWordBytes)}, MaxWords), Checks: slices.Repeat([]string{"c"}, MaxChecks)})
	if len(resp.Words) != 1 || len(resp.Checks) != MaxChecks {
		t.Errorf("at the limits: %d words, %d checks; want 1 (all the same) and %d", len(resp.Words), len(resp.Checks), MaxChecks)
	}
}
