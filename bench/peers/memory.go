package peers

import (
	"runtime/metrics"
	"sync"
	"time"

	"github.com/bloomkv/bloomkv/internal/procstat"
)

// MemoryReporter is an engine store that accounts for its process's
// memory in named parts (bloomkv: Metrics.Memory).
type MemoryReporter interface {
	MemoryParts() ([]MemoryPart, error)
}

// MemoryPart is one part of an engine's account of its memory.
type MemoryPart struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// MemoryPeak is the most resident memory sampled during one workload
// (and a fill's settle), with what the engine said its memory was at that
// sample.
type MemoryPeak struct {
	// Resident is the sample with the largest RSS.
	procstat.Resident
	// Settle is set when that sample was taken during the fill's settle.
	Settle bool `json:"settle,omitempty"`
	// Parts is the engine's accounting at that sample; for an engine that
	// is not a MemoryReporter, the Go runtime's memory alone.
	Parts []MemoryPart `json:"parts,omitempty"`
	// Samples is the number of samples taken.
	Samples int `json:"samples"`
}

// memorySampler samples the process's resident memory, and the store's
// account of it, on a goroutine of its own until finished, keeping the
// sample of the largest RSS.
type memorySampler struct {
	st   any // a MemoryReporter, or not
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	peak   MemoryPeak
	settle bool // the fill's settle has begun
	err    error
}

// sampleMemory starts sampling every interval (never, if interval is 0 or
// less: then only finish samples).
func sampleMemory(st any, interval time.Duration) *memorySampler {
	p := &memorySampler{st: st, stop: make(chan struct{}), done: make(chan struct{})}
	go every(interval, p.stop, p.done, p.sample)
	return p
}

// settling marks the samples from now on as the settle's.
func (p *memorySampler) settling() {
	p.mu.Lock()
	p.settle = true
	p.mu.Unlock()
}

func (p *memorySampler) sample() {
	r, err := procstat.ReadResident()
	var parts []MemoryPart
	if mr, ok := p.st.(MemoryReporter); ok && err == nil {
		parts, err = mr.MemoryParts()
	} else {
		parts = goMemoryParts()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return
	}
	p.peak.Samples++
	if r.RSS > p.peak.RSS {
		p.peak.Resident, p.peak.Parts, p.peak.Settle = r, parts, p.settle
	}
}

// finish stops the sampling, takes one last sample and returns the peak.
func (p *memorySampler) finish() (MemoryPeak, error) {
	close(p.stop)
	<-p.done
	p.sample()
	return p.peak, p.err
}

// goMemorySamples are the runtime/metrics goMemoryParts reads, as
// bloomkv's Metrics.Memory groups them: heap objects; free heap (free and
// unused); stacks (goroutines' and the system's); the runtime's metadata
// and other buffers.
var goMemorySamples = [][]string{
	{"/memory/classes/heap/objects:bytes"},
	{"/memory/classes/heap/free:bytes", "/memory/classes/heap/unused:bytes"},
	{"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes"},
	{"/memory/classes/metadata/mcache/inuse:bytes", "/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/other:bytes", "/memory/classes/other:bytes"},
}

// goMemoryParts returns the Go runtime's memory in bloomkv's Metrics.Memory
// parts, for an engine that has none of its own.
func goMemoryParts() []MemoryPart {
	names := []string{"go heap objects", "go heap free", "go stacks", "go runtime"}
	var samples []metrics.Sample
	for _, group := range goMemorySamples {
		for _, name := range group {
			samples = append(samples, metrics.Sample{Name: name})
		}
	}
	metrics.Read(samples)
	parts := make([]MemoryPart, len(names))
	k := 0
	for i, group := range goMemorySamples {
		parts[i].Name = names[i]
		for range group {
			if samples[k].Value.Kind() == metrics.KindUint64 {
				parts[i].Bytes += int64(samples[k].Value.Uint64())
			}
			k++
		}
	}
	return parts
}
