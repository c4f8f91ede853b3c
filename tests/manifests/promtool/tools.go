//go:build tools

// Package tools names the program this module builds (promtool, for the unit tests of the
// PrometheusRule's alerts), so that go mod tidy keeps its dependencies.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
