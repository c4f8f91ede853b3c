//go:build tools

// Package tools names the program this module builds (the LeaderWorkerSet controller), so
// that go mod tidy keeps its dependencies.
package tools

import _ "sigs.k8s.io/lws/cmd"
