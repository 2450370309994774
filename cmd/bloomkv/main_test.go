package main

import (
	"bytes"
	"flag"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/golden"
)

// TestGolden runs command lines and compares their output with
// testdata/NAME.golden; go test -update rewrites the files after a reviewed
// change. The numbers in the files were checked against the formulas by hand
// when first written (see the bloom package's tests for the formulas).
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"calc-default", []string{"calc"}},
		{"calc-p0.001", []string{"calc", "-n", "50000", "-p", "0.001"}},
		{"calc-bits10", []string{"calc", "-n", "1000", "-bits-per-key", "10"}},
		{"calc-bloom-explicit", []string{"calc", "-family", "bloom", "-n", "1000", "-bits-per-key", "10"}},
		{"calc-fuse-default", []string{"calc", "-family", "fuse"}},
		{"calc-fuse-p0.001", []string{"calc", "-family", "fuse", "-n", "50000", "-p", "0.001"}},
		{"calc-fuse-bits8", []string{"calc", "-family", "fuse", "-n", "1000", "-bits", "8"}},
		{"calc-fuse-bits16", []string{"calc", "-family", "fuse", "-n", "1000000", "-bits", "16"}},
		{"calc-fuse-small", []string{"calc", "-family", "fuse", "-n", "100", "-bits", "8"}},
		{"calc-ribbon-default", []string{"calc", "-family", "ribbon"}},
		{"calc-ribbon-bits8", []string{"calc", "-family", "ribbon", "-n", "10000", "-bits", "8"}},
		{"calc-ribbon-small", []string{"calc", "-family", "ribbon", "-n", "20", "-bits", "8"}},
		{"calc-k4", []string{"calc", "-k", "4"}},
		{"calc-bits10-k3", []string{"calc", "-n", "1000", "-bits-per-key", "10", "-k", "3"}},
		{"calc-k40-p1e-9", []string{"calc", "-p", "1e-9", "-k", "40"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			checkGolden(t, tc.name, stdout.String())
		})
	}
}

// checkGolden compares got with testdata/NAME.golden, which go test -update
// rewrites.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

// TestWidthFor checks the width calc derives from -p: the narrowest w
// with 2^-w ≤ p, at and around the powers of two, up to each family's
// widest.
func TestWidthFor(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want int
	}{
		{0.99, 1}, {0.5, 1}, {0.4999, 2}, {0.01, 7}, {1.0 / 128, 7}, {0.0078, 8},
		{1.0 / 256, 8}, {0.001, 10}, {1.0 / 65536, 16},
	} {
		for _, fam := range []staticFamily{fuseFamily, ribbonFamily} {
			if got, err := fam.widthFor(tc.p); err != nil || got != tc.want {
				t.Errorf("%s widthFor(%g) = %d, %v; want %d", fam.name, tc.p, got, err, tc.want)
			}
		}
	}
	if got, err := ribbonFamily.widthFor(1.0/65536 - 1e-12); err != nil || got != 17 {
		t.Errorf("ribbon widthFor(2^-16 - 1e-12) = %d, %v; want 17", got, err)
	}
	if got, err := ribbonFamily.widthFor(math.Ldexp(1, -32)); err != nil || got != 32 {
		t.Errorf("ribbon widthFor(2^-32) = %d, %v; want 32", got, err)
	}
	for _, tc := range []struct {
		fam staticFamily
		p   float64
	}{
		{fuseFamily, 0}, {fuseFamily, 1}, {fuseFamily, -1}, {fuseFamily, 1.0/65536 - 1e-12},
		{ribbonFamily, 0}, {ribbonFamily, 1}, {ribbonFamily, math.Ldexp(1, -32) - 1e-20},
	} {
		if w, err := tc.fam.widthFor(tc.p); err == nil {
			t.Errorf("%s widthFor(%g) = %d, want an error", tc.fam.name, tc.p, w)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		code     int
		mentions string
	}{
		{nil, 2, "usage"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"calc", "-n", "0"}, 2, "n = 0"},
		{[]string{"calc", "-p", "1.5"}, 2, "p = 1.5"},
		{[]string{"calc", "-p", "NaN"}, 2, "p = NaN"},
		{[]string{"calc", "-bits-per-key", "0.5"}, 2, "bits-per-key = 0.5"},
		{[]string{"calc", "-n", "x"}, 2, "invalid value"},
		{[]string{"calc", "extra"}, 2, "unexpected arguments"},
		{[]string{"calc", "-n", "9000000000000", "-p", "1e-9"}, 2, "maximum"},
		{[]string{"calc", "-family", "xor"}, 2, `-family "xor"`},
		{[]string{"calc", "-bits", "8"}, 2, "-bits is the fuse family's"},
		{[]string{"calc", "-family", "fuse", "-bits-per-key", "10"}, 2, "-bits-per-key sizes a Bloom filter"},
		{[]string{"calc", "-family", "fuse", "-n", "0"}, 2, "n = 0"},
		{[]string{"calc", "-k", "0"}, 2, "k = 0"},
		{[]string{"calc", "-k", "65"}, 2, "k = 65"},
		{[]string{"calc", "-k", "x"}, 2, "invalid value"},
		{[]string{"calc", "-family", "fuse", "-k", "4"}, 2, "-k is a Bloom filter's probe count"},
		{[]string{"calc", "-family", "fuse", "-p", "0"}, 2, "p = 0"},
		{[]string{"calc", "-family", "fuse", "-p", "NaN"}, 2, "p = NaN"},
		{[]string{"calc", "-family", "fuse", "-p", "1e-6"}, 2, "widest fingerprint"},
		{[]string{"calc", "-family", "fuse", "-bits", "0"}, 2, "bits = 0"},
		{[]string{"calc", "-family", "fuse", "-bits", "17"}, 2, "bits = 17"},
		{[]string{"calc", "-family", "fuse", "-n", "9000000000000"}, 2, "2^31"},
		{[]string{"calc", "-family", "ribbon", "-bits-per-key", "10"}, 2, "-bits-per-key sizes a Bloom filter"},
		{[]string{"calc", "-family", "ribbon", "-k", "4"}, 2, "-k is a Bloom filter's probe count"},
		{[]string{"calc", "-family", "ribbon", "-n", "0"}, 2, "n = 0"},
		{[]string{"calc", "-family", "ribbon", "-p", "1e-10"}, 2, "widest result"},
		{[]string{"calc", "-family", "ribbon", "-bits", "0"}, 2, "bits = 0"},
		{[]string{"calc", "-family", "ribbon", "-bits", "33"}, 2, "bits = 33"},
		{[]string{"calc", "-family", "ribbon", "-n", "9000000000000"}, 2, "2^31"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.mentions) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr.String(), tc.code, tc.mentions)
		}
	}
}

// TestHelp checks that help asked for — help, -h, help CMD, CMD -h — goes
// to stdout with exit status 0, in the one format of every command, and
// that a command line without a command is a usage error on stderr.
func TestHelp(t *testing.T) {
	type want struct {
		code   int
		stdout string // its beginning; "" for none
		stderr string // its beginning; "" for none
	}
	top := "usage: bloomkv COMMAND [flags] [operands]\n\ncommands:\n"
	cases := map[string]struct {
		args []string
		want want
	}{
		"none":       {nil, want{exitUsage, "", top}},
		"help":       {[]string{"help"}, want{0, top, ""}},
		"-h":         {[]string{"-h"}, want{0, top, ""}},
		"--help":     {[]string{"--help"}, want{0, top, ""}},
		"help a b":   {[]string{"help", "get", "put"}, want{exitUsage, "", "bloomkv: help takes at most one command"}},
		"help nope":  {[]string{"help", "nope"}, want{exitUsage, "", `bloomkv: unknown command "nope"`}},
		"unknown":    {[]string{"nope"}, want{exitUsage, "", `bloomkv: unknown command "nope"`}},
		"get -x":     {[]string{"get", "-x"}, want{exitUsage, "", "bloomkv get: flag provided but not defined: -x"}},
		"help -flag": {[]string{"-x"}, want{exitUsage, "", `bloomkv: unknown command "-x"`}},
	}
	for _, c := range commands {
		synopsis := "usage: bloomkv " + c.name
		summary := "\n\n" + strings.ToUpper(c.summary[:1]) + c.summary[1:] + ".\n\n"
		for _, args := range [][]string{{c.name, "-h"}, {"help", c.name}, {c.name, "-help"}} {
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			out := stdout.String()
			if code != 0 || stderr.Len() > 0 || !strings.HasPrefix(out, synopsis) || !strings.Contains(out, summary) {
				t.Errorf("%q: exit %d, stderr %q, stdout:\n%s\nwant exit 0, stdout beginning %q with the summary %q", args, code, stderr.String(), out, synopsis, summary)
			}
			if first, _, _ := strings.Cut(out, "\n"); strings.Contains(first, "  ") {
				t.Errorf("%q: usage line %q", args, first)
			}
		}
	}
	for name, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.want.code || !strings.HasPrefix(stdout.String(), tc.want.stdout) || !strings.HasPrefix(stderr.String(), tc.want.stderr) ||
			(tc.want.stdout == "") != (stdout.Len() == 0) || (tc.want.stderr == "") != (stderr.Len() == 0) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %+v", name, code, stdout.String(), stderr.String(), tc.want)
		}
	}
}

// TestFamiliesListed checks that every list of the filter families names
// all three: the top-level help, bench's help and bench -filter's error.
func TestFamiliesListed(t *testing.T) {
	var help, benchHelp, stderr bytes.Buffer
	run([]string{"help"}, &help, &stderr)
	run([]string{"bench", "-h"}, &benchHelp, &stderr)
	var filterErr, out bytes.Buffer
	if code := run([]string{"bench", "-filter", "cuckoo:8"}, &out, &filterErr); code != exitUsage {
		t.Fatalf("bench -filter cuckoo:8: exit %d", code)
	}
	for name, text := range map[string]string{"help": help.String(), "bench -h": benchHelp.String(), "bench -filter's error": filterErr.String()} {
		lower := strings.ToLower(text)
		for _, family := range []string{"bloom", "fuse", "ribbon"} {
			if !strings.Contains(lower, family) {
				t.Errorf("%s does not name %s:\n%s", name, family, text)
			}
		}
	}
}

// TestBenchFlagGroups checks that bench -h lists every flag of bench in
// exactly one group.
func TestBenchFlagGroups(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"bench", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	listed := map[string]int{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.HasPrefix(line, "  -") {
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "  -"), " ")
			name, _, _ = strings.Cut(name, "\t")
			listed[name]++
		}
	}
	grouped := map[string]int{}
	for _, g := range benchFlagGroups {
		for _, n := range g.names {
			grouped[n]++
		}
	}
	newBenchFlagSet(new(benchFlags)).VisitAll(func(f *flag.Flag) {
		if grouped[f.Name] == 0 {
			t.Errorf("-%s is in no group", f.Name)
		}
	})
	for name, n := range grouped {
		if n != 1 || listed[name] != 1 {
			t.Errorf("-%s: in %d groups, listed %d times", name, n, listed[name])
		}
	}
}

// TestHexHelp checks that -hex's help names only flags of its own command.
func TestHexHelp(t *testing.T) {
	flagRE := regexp.MustCompile(`-[a-z][a-z-]*`)
	for _, name := range []string{"put", "get", "del", "scan", "explain", "tree"} {
		var stdout, stderr bytes.Buffer
		run([]string{name, "-h"}, &stdout, &stderr)
		_, hexHelp, ok := strings.Cut(stdout.String(), "  -hex\n")
		if !ok {
			t.Fatalf("%s -h lists no -hex:\n%s", name, stdout.String())
		}
		hexHelp, _, _ = strings.Cut(hexHelp, "\n")
		for _, f := range flagRE.FindAllString(hexHelp, -1) {
			if !strings.Contains(stdout.String(), "\n  "+f+" ") && !strings.Contains(stdout.String(), "\n  "+f+"\n") && !strings.Contains(stdout.String(), "\n  "+f+"\t") {
				t.Errorf("%s: -hex's help names %s, which %s has not: %q", name, f, name, hexHelp)
			}
		}
	}
}

// TestCalcCountNotation checks that calc -n takes e-notation for a whole
// number, with the output of the same number written out, and refuses a
// fraction.
func TestCalcCountNotation(t *testing.T) {
	var a, b, stderr bytes.Buffer
	if code := run([]string{"calc", "-n", "1e9"}, &a, &stderr); code != 0 {
		t.Fatalf("calc -n 1e9: exit %d: %s", code, stderr.String())
	}
	run([]string{"calc", "-n", "1000000000"}, &b, &stderr)
	if a.String() != b.String() {
		t.Errorf("calc -n 1e9 printed\n%s\ncalc -n 1000000000\n%s", a.String(), b.String())
	}
	stderr.Reset()
	if code := run([]string{"calc", "-n", "2.5"}, &a, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "not a whole number") {
		t.Errorf("calc -n 2.5: exit %d, %q", code, stderr.String())
	}
}
