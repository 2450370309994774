package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/workload"
)

// printMemory prints, if memory was sampled, each workload's peak resident
// memory per engine, then each engine's account of its memory at its
// highest sample of the run.
func printMemory(stdout io.Writer, runs []engineRun, ws []workload.Workload) {
	sampled := false
	for _, r := range runs {
		for _, res := range r.Results {
			sampled = sampled || res.Memory != nil
		}
	}
	if !sampled {
		return
	}
	fmt.Fprint(stdout, "\nresident memory sampled during each workload (and a fill's settle, s): the highest sample, RSS = anon + file\n")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	writeHeader(tw, runs, "")
	for j, w := range ws {
		fmt.Fprintf(tw, "%s\t", w)
		for _, r := range runs {
			m := r.Results[j].Memory
			if m == nil {
				fmt.Fprint(tw, "–\t")
				continue
			}
			settle := ""
			if m.Settle {
				settle = " s"
			}
			fmt.Fprintf(tw, "%.1f = %.1f + %.1f MiB%s\t", mib(m.RSS), mib(m.Anon), mib(m.File+m.Shmem), settle)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()

	// Each engine's highest sample, and the union of the parts' names.
	peaks := make([]*peers.MemoryPeak, len(runs))
	var names []string
	for i, r := range runs {
		for j := range r.Results {
			if m := r.Results[j].Memory; m != nil && (peaks[i] == nil || m.RSS > peaks[i].RSS) {
				peaks[i] = m
			}
		}
		if peaks[i] != nil {
			for _, p := range peaks[i].Parts {
				if !slices.Contains(names, p.Name) {
					names = append(names, p.Name)
				}
			}
		}
	}
	fmt.Fprint(stdout, "\neach engine's account of its memory at its highest sample\n")
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "part\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t", r.Name)
	}
	fmt.Fprintln(tw)
	row := func(name string, cell func(m *peers.MemoryPeak) string) {
		fmt.Fprintf(tw, "%s\t", name)
		for _, m := range peaks {
			if m == nil {
				fmt.Fprint(tw, "–\t")
			} else {
				fmt.Fprintf(tw, "%s\t", cell(m))
			}
		}
		fmt.Fprintln(tw)
	}
	row("sampled in", func(m *peers.MemoryPeak) string {
		for _, r := range runs {
			for j := range r.Results {
				if r.Results[j].Memory == m {
					if m.Settle {
						return string(ws[j]) + "'s settle"
					}
					return string(ws[j])
				}
			}
		}
		return "–"
	})
	for _, name := range names {
		row(name, func(m *peers.MemoryPeak) string {
			for _, p := range m.Parts {
				if p.Name == name {
					return fmt.Sprintf("%.1f MiB", mib(p.Bytes))
				}
			}
			return "–"
		})
	}
	row("accounted", func(m *peers.MemoryPeak) string {
		var sum int64
		for _, p := range m.Parts {
			sum += p.Bytes
		}
		return fmt.Sprintf("%.1f MiB", mib(sum))
	})
	row("RssAnon", func(m *peers.MemoryPeak) string { return fmt.Sprintf("%.1f MiB", mib(m.Anon)) })
	row("RssFile + RssShmem", func(m *peers.MemoryPeak) string { return fmt.Sprintf("%.1f MiB", mib(m.File+m.Shmem)) })
	row("VmRSS", func(m *peers.MemoryPeak) string { return fmt.Sprintf("%.1f MiB", mib(m.RSS)) })
	tw.Flush()
	fmt.Fprintln(stdout, "(parts: bloomkv's Metrics.Memory; pebble's memtables and block cache (its manual allocations) and the Go runtime's,\n"+
		" as runtime/metrics counts them for every engine; file pages are mapped executables and libraries, and tables an engine maps)")
}
