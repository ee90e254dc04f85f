package main

import (
	"strings"
	"testing"
)

func TestCallTask(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantOut    string
		wantErr    []string
	}{
		{name: "a task with progress", args: []string{"call", "--task", "--log-level", "info", "--config", "testdata/tasks/tools.yaml", "slowjob", `{"input": "x"}`},
			wantOut: "done", wantErr: []string{"task: step ", "-> task ", " started"}},
		{name: "a tool with no task mode", args: []string{"call", "--task", "calculator", `{"input": "1+1"}`},
			wantStatus: 1, wantErr: []string{`tool "calculator" cannot run as a task`}},
		{name: "the same tool without --task", args: []string{"call", "--config", "testdata/tasks/tools.yaml", "slowjob", `{"input": "x"}`},
			wantOut: "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, status := runBinary(t, tt.args...)
			if status != tt.wantStatus || strings.TrimSpace(out) != tt.wantOut {
				t.Fatalf("exit %d, stdout %q; want %d, %q\nstderr: %s", status, out, tt.wantStatus, tt.wantOut, errOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}
