package files_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/builtin/files"
	"github.com/mcp-tools/mcp-tools/tools/schema"
)

// maxErrorLen bounds an error message about a huge argument: it may quote
// a little of it, never all.
const maxErrorLen = 500

// TestStringArgumentsHaveMaxLength: every string argument publishes the
// documented limit, so the server refuses a longer one before the call.
func TestStringArgumentsHaveMaxLength(t *testing.T) {
	want := map[string]map[string]float64{
		"file_read":  {"path": files.MaxPathLength},
		"file_write": {"path": files.MaxPathLength, "content": files.MaxContentLength},
		"file_list":  {"path": files.MaxPathLength, "glob": files.MaxGlobLength},
	}
	_, ts := sandbox(t, files.Config{})
	for name, tl := range ts {
		var s struct {
			Properties map[string]struct {
				Type        string   `json:"type"`
				MaxLength   *float64 `json:"maxLength"`
				Description string   `json:"description"`
			} `json:"properties"`
		}
		must(t, json.Unmarshal(tl.Info().InputSchema, &s))
		for prop, p := range s.Properties {
			if p.Type != "string" {
				continue
			}
			switch w, ok := want[name][prop]; {
			case !ok:
				t.Errorf("%s.%s: a string argument this test does not know; give it a maxLength and add it here", name, prop)
			case p.MaxLength == nil:
				t.Errorf("%s.%s: no maxLength, want %v", name, prop, w)
			case *p.MaxLength != w:
				t.Errorf("%s.%s: maxLength %v, want %v", name, prop, *p.MaxLength, w)
			}
		}
		for prop := range want[name] {
			if _, ok := s.Properties[prop]; !ok {
				t.Errorf("%s: no argument %q in the schema", name, prop)
			}
		}
	}
}

func TestHostileArguments(t *testing.T) {
	mib := strings.Repeat("a", 1<<20)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string // in the tool's error
	}{
		{"read a 1 MiB path", "file_read", map[string]any{"path": mib}, "path is too long"},
		{"write to a 1 MiB path", "file_write", map[string]any{"path": mib, "content": "x"}, "path is too long"},
		{"append to a 1 MiB path", "file_write", map[string]any{"path": mib, "content": "x", "append": true}, "path is too long"},
		{"list a 1 MiB path", "file_list", map[string]any{"path": mib}, "path is too long"},
		{"list with a 1 MiB glob", "file_list", map[string]any{"glob": mib}, "glob is too long"},
		{"list with a glob one over", "file_list", map[string]any{"glob": strings.Repeat("*", files.MaxGlobLength+1)}, "glob is too long"},
		{"write content one character over", "file_write", map[string]any{"path": "big.txt", "content": strings.Repeat("a", files.MaxContentLength+1)}, "content is too long"},
		{"a long path at the limit is looked up", "file_read", map[string]any{"path": strings.Repeat("a/", files.MaxPathLength/2)}, "(4096 bytes) does not exist"},
		{"a long path with a long name", "file_read", map[string]any{"path": strings.Repeat("a", files.MaxPathLength)}, "… (4096 bytes)"},
		{"a long bad glob", "file_list", map[string]any{"glob": "[" + strings.Repeat("a", files.MaxGlobLength-1)}, "bad glob"},
		{"a long absolute path", "file_write", map[string]any{"path": "/" + strings.Repeat("a", files.MaxPathLength-1), "content": "x"}, "absolute path"},
		{"a long path out", "file_read", map[string]any{"path": strings.Repeat("../", files.MaxPathLength/3)}, "leaves the root"},
	}
	// A MaxWriteBytes above MaxContentLength, so that the content is
	// refused by its length in characters, not by the size cap.
	_, ts := sandbox(t, files.Config{MaxWriteBytes: 2 * files.MaxContentLength})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, ts[tt.tool], tt.args)
			if r.Err == nil {
				t.Fatalf("%s succeeded, want an error containing %q", tt.tool, tt.want)
			}
			if !strings.Contains(r.Err.Message, tt.want) {
				t.Errorf("error %.300q, want one containing %q", r.Err.Message, tt.want)
			}
			if len(r.Err.Message) >= maxErrorLen {
				t.Errorf("error is %d bytes long, want under %d: %.300q", len(r.Err.Message), maxErrorLen, r.Err.Message)
			}
		})
	}
}

// TestHostileArgumentsRefusedBySchema: the server's validator, given the
// published schema, refuses the same values with a short message.
func TestHostileArgumentsRefusedBySchema(t *testing.T) {
	mib := strings.Repeat("a", 1<<20)
	tests := []struct {
		tool string
		args map[string]any
	}{
		{"file_read", map[string]any{"path": mib}},
		{"file_write", map[string]any{"path": mib, "content": "x"}},
		{"file_list", map[string]any{"path": mib}},
		{"file_list", map[string]any{"glob": mib}},
	}
	_, ts := sandbox(t, files.Config{})
	for _, tt := range tests {
		v, err := schema.Compile(ts[tt.tool].Info().InputSchema)
		must(t, err)
		b, _ := json.Marshal(tt.args)
		err = v.Validate(b)
		var te *tools.Error
		switch {
		case err == nil:
			t.Errorf("%s: the validator accepted a 1 MiB argument", tt.tool)
		case !errors.As(err, &te) || te.Kind != tools.KindInvalidArguments:
			t.Errorf("%s: validator error %v, want invalid arguments", tt.tool, err)
		case len(err.Error()) >= maxErrorLen:
			t.Errorf("%s: validator error is %d bytes long, want under %d", tt.tool, len(err.Error()), maxErrorLen)
		}
	}
}
