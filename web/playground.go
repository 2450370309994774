package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bloomkv/bloomkv/bloom"
)

// playgroundRequest is the playground's state: a filter of M bits and K
// probes holding Words, and the Checks asked of it.
type playgroundRequest struct {
	M      uint64   `json:"m"`
	K      int      `json:"k"`
	Words  []string `json:"words"`
	Checks []string `json:"checks"`
}

// wordBits is a word's bit positions (bloom.ClassicLocations, in probe
// order) and, for a check, which of them are set and the filter's answer.
type wordBits struct {
	Word      string   `json:"word"`
	Positions []uint64 `json:"positions"`
	// Set[i] reports that bit Positions[i] is set (checks only).
	Set []bool `json:"set,omitempty"`
	// Maybe is the filter's MayContain (checks only); Added that the word
	// is among the words added, so that Maybe without Added is a false
	// positive.
	Maybe *bool `json:"maybe,omitempty"`
	Added bool  `json:"added"`
}

// fprPoint is the false-positive rate after the first N distinct words:
// measured on the probe words, and from the formula.
type fprPoint struct {
	N        int     `json:"n"`
	Measured float64 `json:"measured"`
	Formula  float64 `json:"formula"`
}

type playgroundResponse struct {
	M     uint64     `json:"m"`
	K     int        `json:"k"`
	Words []wordBits `json:"words"` // the distinct words added, in order
	// Checks answer the request's checks, in order.
	Checks []wordBits `json:"checks"`
	// Bits are the positions of the set bits, ascending.
	Bits []uint64 `json:"bits"`
	// EstimatedCount and EstimatedFPR are the filter's own estimates from
	// its bits set (bloom.Classic.EstimatedCount, EstimatedFalsePositiveRate);
	// the count is null when every bit is set, where the estimate is
	// infinite.
	EstimatedCount *float64 `json:"estimatedCount"`
	EstimatedFPR   float64  `json:"estimatedFPR"`
	// Probes is how many never-added words the rate was measured on;
	// FalsePositives how many of them the full filter answers "maybe" for.
	Probes         int        `json:"probes"`
	FalsePositives int        `json:"falsePositives"`
	Series         []fprPoint `json:"series"`
}

// playgroundProbes is the number of never-added words the measured rate is
// counted over: enough to see a rate of 1% within ±0.2% (two standard
// errors), few enough to count in a millisecond.
const playgroundProbes = 10000

// probeWord is the i-th word of the measuring set.
func probeWord(i int) string { return "probe-" + strconv.Itoa(i) }

func (s *server) playground(r *http.Request) (any, error) {
	req, err := decodePlayground(r)
	if err != nil {
		return nil, err
	}
	f, err := bloom.NewClassicSize(req.M, req.K)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	resp := &playgroundResponse{M: req.M, K: req.K, Words: []wordBits{}, Checks: []wordBits{}, Bits: []uint64{}}
	added := make(map[string]bool, len(req.Words))
	// firstSet[i] is the number of words added when bit i was first set;
	// 0 while it is clear.
	firstSet := make([]int, req.M)
	for _, w := range req.Words {
		if added[w] {
			continue
		}
		added[w] = true
		f.Add([]byte(w))
		pos := bloom.ClassicLocations(nil, bloom.HashString(w), req.M, req.K)
		for _, p := range pos {
			if firstSet[p] == 0 {
				firstSet[p] = len(resp.Words) + 1
			}
		}
		resp.Words = append(resp.Words, wordBits{Word: w, Positions: pos, Added: true})
	}
	bitmap := f.AppendBitmap(nil)
	isSet := func(i uint64) bool { return bitmap[i/8]&(0x80>>(i%8)) != 0 }
	for i := range req.M {
		if isSet(i) {
			resp.Bits = append(resp.Bits, i)
		}
	}
	for _, w := range req.Checks {
		pos := bloom.ClassicLocations(nil, bloom.HashString(w), req.M, req.K)
		set := make([]bool, len(pos))
		for i, p := range pos {
			set[i] = isSet(p)
		}
		maybe := f.MayContain([]byte(w))
		resp.Checks = append(resp.Checks, wordBits{Word: w, Positions: pos, Set: set, Maybe: &maybe, Added: added[w]})
	}
	if c := f.EstimatedCount(); !math.IsInf(c, 0) {
		resp.EstimatedCount = &c
	}
	resp.EstimatedFPR = f.EstimatedFalsePositiveRate()
	resp.FalsePositives, resp.Probes, resp.Series = measure(f, firstSet, added, len(resp.Words))
	return resp, nil
}

// measure counts the false positives of the probe words never added: on
// the full filter f (by MayContain), and after each of the first n words
// (a probe turns positive once the last of its bits is set, so the count
// after i words is the number of probes whose bits' latest firstSet is at
// most i).
func measure(f *bloom.Classic, firstSet []int, added map[string]bool, n int) (fp, probes int, series []fprPoint) {
	turned := make([]int, n+1) // turned[i]: probes positive from word i on
	var pos []uint64
	for i := range playgroundProbes {
		w := probeWord(i)
		if added[w] {
			continue
		}
		probes++
		if f.MayContain([]byte(w)) {
			fp++
		}
		pos = bloom.ClassicLocations(pos[:0], bloom.HashString(w), f.Bits(), f.Probes())
		last := 0
		for _, p := range pos {
			if firstSet[p] == 0 {
				last = -1
				break
			}
			last = max(last, firstSet[p])
		}
		if last > 0 {
			turned[last]++
		}
	}
	series = make([]fprPoint, 0, n)
	positives := 0
	for i := 1; i <= n; i++ {
		positives += turned[i]
		series = append(series, fprPoint{N: i, Measured: float64(positives) / float64(probes),
			Formula: bloom.ClassicFalsePositiveRate(f.Bits(), f.Probes(), float64(i))})
	}
	return fp, probes, series
}

// decodePlayground reads and checks a playground request.
func decodePlayground(r *http.Request) (*playgroundRequest, error) {
	body := http.MaxBytesReader(nil, r.Body, MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	var req playgroundRequest
	if err := dec.Decode(&req); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return nil, &requestError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body: more than %d bytes", MaxBodyBytes)}
		}
		return nil, jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badRequest("request body: more than one JSON value")
	}
	switch {
	case req.M < 1 || req.M > MaxPlaygroundBits:
		return nil, badRequest("m = %d: must be in [1, %d]", req.M, MaxPlaygroundBits)
	case req.K < 1 || req.K > MaxPlaygroundProbes:
		return nil, badRequest("k = %d: must be in [1, %d]", req.K, MaxPlaygroundProbes)
	case len(req.Words) > MaxWords:
		return nil, badRequest("words: %d, more than the %d allowed", len(req.Words), MaxWords)
	case len(req.Checks) > MaxChecks:
		return nil, badRequest("checks: %d, more than the %d allowed", len(req.Checks), MaxChecks)
	}
	for _, list := range [][]string{req.Words, req.Checks} {
		if i := slices.IndexFunc(list, badWord); i >= 0 {
			return nil, badRequest("word %q: want 1 to %d bytes of UTF-8", list[i], MaxWordBytes)
		}
	}
	return &req, nil
}

// jsonError words the error of decoding a playground request in the
// request's own terms — its fields and what each wants — rather than in
// those of Go's types.
func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return badRequest("the request is not valid JSON (at byte %d): want an object such as {\"m\": 64, \"k\": 3, \"words\": [\"apple\"], \"checks\": []}", syntax.Offset)
	case errors.As(err, &typ):
		want := map[string]string{"m": "a whole number of bits", "k": "a whole number of probes", "words": "a list of words", "checks": "a list of words"}[typ.Field]
		if strings.HasPrefix(typ.Field, "words.") || strings.HasPrefix(typ.Field, "checks.") {
			want = "a word in quotes"
		}
		if want == "" {
			want = "another kind of value"
		}
		if typ.Field == "" {
			return badRequest("the request: want a JSON object with m, k, words and checks, got %s", typ.Value)
		}
		return badRequest("%s: want %s, got %s", typ.Field, want, typ.Value)
	case errors.Is(err, io.EOF):
		return badRequest("the request is empty: want a JSON object with m, k, words and checks")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("the request's JSON ends before its object does")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("unknown field %s: the fields are m, k, words and checks", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return badRequest("the request is not a JSON object with m, k, words and checks")
}

func badWord(w string) bool { return w == "" || len(w) > MaxWordBytes || !utf8.ValidString(w) }
