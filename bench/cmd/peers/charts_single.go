//go:build peers_single

package main

import "errors"

// errNoCharts is why this build cannot draw charts: a peers_single build,
// one engine's child, links in no charts (package internal/chart and
// gonum/plot under it), so that its binary holds only what its engine's
// run needs.
var errNoCharts = errors.New("this binary, built with tag peers_single for one engine's child, draws no charts: build the runner without tags to draw them")

// writeCharts returns errNoCharts.
func (r *report) writeCharts(dir string) error { return errNoCharts }
