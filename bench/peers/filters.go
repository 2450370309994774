package peers

// FilterReporter is a store that says what its filters cost and what they
// are expected to save; Run records it after each read workload
// (Outcome.Filters).
type FilterReporter interface {
	Filters() (Filters, error)
}

// Filters is a tree's point filters as a FilterReporter sees them.
type Filters struct {
	// BitsPerKey is the filters' bits over the tree's entries.
	BitsPerKey float64 `json:"bits_per_key"`
	// Expected is the engine's expected false-positive reads per Get of
	// an absent key, from the filters its tables have: the sum over the
	// runs such a Get probes of their rates.
	Expected float64 `json:"expected"`
	// Uniform is the same sum for uniform blocked Bloom filters of
	// BitsPerKey in every run: the filters of the same memory without
	// an allocation.
	Uniform float64 `json:"uniform"`
}
