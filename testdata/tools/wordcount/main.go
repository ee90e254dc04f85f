// Command wordcount is a sample subprocess tool written in Go, for the
// example configuration in testdata/tools.yaml. It reads
// {"input": "...", "arguments": {"text": "...", "unique": false}} on stdin
// and writes {"output": "...", "success": true, "structured": {...}}.
package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
)

func main() {
	var req struct {
		Arguments struct {
			Text   string `json:"text"`
			Unique bool   `json:"unique"`
		} `json:"arguments"`
	}
	out := json.NewEncoder(os.Stdout)
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		out.Encode(map[string]any{"success": false, "error": "cannot read the request: " + err.Error()})
		return
	}
	words := strings.Fields(req.Arguments.Text)
	n := len(words)
	if req.Arguments.Unique {
		seen := map[string]bool{}
		for _, w := range words {
			seen[strings.ToLower(w)] = true
		}
		n = len(seen)
	}
	out.Encode(map[string]any{
		"success":    true,
		"output":     strconv.Itoa(n) + " words",
		"structured": map[string]any{"count": n},
	})
}
