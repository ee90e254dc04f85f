package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var entry = Entry{Command: "/opt/bin/mcp-tools", Args: []string{"serve", "--root", "/home/u/notes"}}

func mustClient(t testing.TB, name string) Client {
	t.Helper()
	c, ok := Lookup(name)
	if !ok {
		t.Fatalf("no client %q", name)
	}
	return c
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name    string
		client  string
		in      string
		want    string
		replace bool
	}{
		{name: "new file", client: "claude-desktop", in: "", want: `{
  "mcpServers": {
    "mcp-tools": {
      "command": "/opt/bin/mcp-tools",
      "args": [
        "serve",
        "--root",
        "/home/u/notes"
      ]
    }
  }
}
`},
		{name: "other settings, no servers yet", client: "claude-desktop", in: `{
    "globalShortcut": "Ctrl+Space"
}
`, want: `{
    "globalShortcut": "Ctrl+Space",
    "mcpServers": {
        "mcp-tools": {
            "command": "/opt/bin/mcp-tools",
            "args": [
                "serve",
                "--root",
                "/home/u/notes"
            ]
        }
    }
}
`},
		{name: "next to another server, order kept", client: "cursor", in: `{
  "mcpServers": {
    "zeta": {"command": "z"}
  },
  "alpha": 1
}`, want: `{
  "mcpServers": {
    "zeta": {"command": "z"},
    "mcp-tools": {
      "command": "/opt/bin/mcp-tools",
      "args": [
        "serve",
        "--root",
        "/home/u/notes"
      ]
    }
  },
  "alpha": 1
}`},
		{name: "numbers kept as written", client: "claude-desktop", in: `{"big": 1e400, "neg": -0, "long": 123456789012345678901234567890, "mcpServers": {}}`,
			want: `{"big": 1e400, "neg": -0, "long": 123456789012345678901234567890, "mcpServers": {
  "mcp-tools": {
    "command": "/opt/bin/mcp-tools",
    "args": [
      "serve",
      "--root",
      "/home/u/notes"
    ]
  }
}}`},
		{name: "CRLF file stays CRLF", client: "claude-desktop", in: "{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"x\"}\r\n  }\r\n}\r\n",
			want: "{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"x\"},\r\n    \"mcp-tools\": {\r\n      \"command\": \"/opt/bin/mcp-tools\",\r\n" +
				"      \"args\": [\r\n        \"serve\",\r\n        \"--root\",\r\n        \"/home/u/notes\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n"},
		{name: "CRLF file without servers stays CRLF", client: "vscode", in: "{\r\n\t\"inputs\": [],\r\n}\r\n",
			want: "{\r\n\t\"inputs\": [],\r\n\t\"servers\": {\r\n\t\t\"mcp-tools\": {\r\n\t\t\t\"type\": \"stdio\",\r\n\t\t\t\"command\": \"/opt/bin/mcp-tools\",\r\n" +
				"\t\t\t\"args\": [\r\n\t\t\t\t\"serve\",\r\n\t\t\t\t\"--root\",\r\n\t\t\t\t\"/home/u/notes\"\r\n\t\t\t]\r\n\t\t}\r\n\t},\r\n}\r\n"},
		{name: "replaces its own entry only", client: "windsurf", in: `{"mcpServers": {"mcp-tools": {"command": "old"}, "other": {"command": "o"}}}`,
			want: `{"mcpServers": {"mcp-tools": {"command": "/opt/bin/mcp-tools", "args": ["serve","--root","/home/u/notes"]}, "other": {"command": "o"}}}`, replace: true},
		{name: "update keeps the entry's env", client: "claude-desktop", in: `{
  "mcpServers": {
    "mcp-tools": {
      "command": "/old/mcp-tools",
      "args": ["serve", "--state", "redis://:${REDIS_PASSWORD}@db:6379/0"],
      "env": {"REDIS_PASSWORD": "s3cret"},
      "disabled": false
    }
  }
}
`, want: `{
  "mcpServers": {
    "mcp-tools": {
      "command": "/opt/bin/mcp-tools",
      "args": [
        "serve",
        "--root",
        "/home/u/notes"
      ],
      "env": {"REDIS_PASSWORD": "s3cret"},
      "disabled": false
    }
  }
}
`, replace: true},
		{name: "VS Code update keeps env and comments, adds type", client: "vscode", in: `{
	"servers": {
		"mcp-tools": {
			// mine
			"command": "/old/mcp-tools", /* old path */
			"env": {"A": "1",},
		},
	},
}
`, want: `{
	"servers": {
		"mcp-tools": {
			// mine
			"command": "/opt/bin/mcp-tools", /* old path */
			"env": {"A": "1",},
			"type": "stdio",
			"args": [
				"serve",
				"--root",
				"/home/u/notes"
			],
		},
	},
}
`, replace: true},
		{name: "an HTTP entry of the name is replaced whole", client: "cursor", in: `{"mcpServers": {"mcp-tools": {"url": "http://localhost:8080/mcp"}}}`,
			want: `{"mcpServers": {"mcp-tools": {"command":"/opt/bin/mcp-tools","args":["serve","--root","/home/u/notes"]}}}`, replace: true},
		{name: "empty servers", client: "claude-code", in: `{"numStartups": 3, "mcpServers": {}}`,
			want: `{"numStartups": 3, "mcpServers": {
  "mcp-tools": {
    "type": "stdio",
    "command": "/opt/bin/mcp-tools",
    "args": [
      "serve",
      "--root",
      "/home/u/notes"
    ]
  }
}}`},
		{name: "VS Code keeps comments and a trailing comma", client: "vscode", in: `// My MCP servers
{
	/* the one I use */
	"servers": {
		"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}, // keep me
	},
	"inputs": [],
}
`, want: `// My MCP servers
{
	/* the one I use */
	"servers": {
		"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
		"mcp-tools": {
			"type": "stdio",
			"command": "/opt/bin/mcp-tools",
			"args": [
				"serve",
				"--root",
				"/home/u/notes"
			]
		}, // keep me
	},
	"inputs": [],
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, replaced, err := Merge(mustClient(t, tt.client), []byte(tt.in), "mcp-tools", entry)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if replaced != tt.replace {
				t.Errorf("replaced = %v, want %v", replaced, tt.replace)
			}
		})
	}
}

func TestMergeRefuses(t *testing.T) {
	tests := []struct {
		name, client, in, want string
	}{
		{"comment in strict JSON", "claude-desktop", "{\n  // no\n  \"mcpServers\": {}\n}", "comments are not allowed"},
		{"trailing comma in strict JSON", "cursor", `{"mcpServers": {"a": {},}}`, "trailing comma"},
		{"not JSON", "windsurf", `mcpServers = {}`, "unexpected"},
		{"truncated", "claude-code", `{"mcpServers": {"a": `, "unexpected end"},
		{"top level array", "cursor", `[]`, "top level is not an object"},
		{"servers not an object", "vscode", `{"servers": []}`, `"servers" is not an object`},
		{"too deep", "vscode", `{"x": ` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + `}`, "levels deep"},
		{"unterminated comment", "vscode", `{} /*`, "unterminated comment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Merge(mustClient(t, tt.client), []byte(tt.in), "mcp-tools", entry)
			if !errors.Is(err, ErrParse) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Merge = %v, want an ErrParse containing %q", err, tt.want)
			}
		})
	}
}

func TestPath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the expected paths are Linux's")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	want := map[string]string{
		"claude-desktop": ".config/Claude/claude_desktop_config.json",
		"claude-code":    ".claude.json",
		"cursor":         ".cursor/mcp.json",
		"vscode":         ".config/Code/User/mcp.json",
		"windsurf":       ".codeium/windsurf/mcp_config.json",
	}
	for _, c := range Clients {
		got, err := c.Path()
		if err != nil {
			t.Fatal(err)
		}
		if w := filepath.Join(home, want[c.Name]); got != w {
			t.Errorf("%s: got %s, want %s", c.Name, got, w)
		}
	}
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if got, _ := mustClient(t, "claude-desktop").Path(); got != filepath.Join(xdg, "Claude", "claude_desktop_config.json") {
		t.Errorf("with XDG_CONFIG_HOME: got %s", got)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "mcp.json")
	c := mustClient(t, "cursor")
	r, err := WriteFile(c, path, "mcp-tools", entry, true)
	if err != nil || !r.Created {
		t.Fatalf("dry run: %+v, %v", r, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dry run wrote %s: %v", path, err)
	}
	if r, err = WriteFile(c, path, "mcp-tools", entry, false); err != nil || r.Backup != "" {
		t.Fatalf("first write: %+v, %v", r, err)
	}
	first, _ := os.ReadFile(path)
	r, err = WriteFile(c, path, "other", Entry{Command: "/x"}, false)
	if err != nil || r.Backup != path+".bak" {
		t.Fatalf("second write: %+v, %v", r, err)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != string(first) {
		t.Errorf("backup = %q, want the file as it was: %q", bak, first)
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.MCPServers) != 2 {
		t.Errorf("file after two installs: %s (%v), want both entries", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	// A file it cannot parse is left alone.
	bad := []byte("{ not json")
	os.WriteFile(path, bad, 0o644)
	if _, err := WriteFile(c, path, "mcp-tools", entry, false); !errors.Is(err, ErrParse) {
		t.Errorf("unparseable file: err = %v, want ErrParse", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(bad) {
		t.Errorf("unparseable file was changed to %q", b)
	}
}

// FuzzMerge checks that Merge never panics, and that whatever it accepts
// comes out parseable, with the entry, and with every other entry kept.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{"", "{}", `{"mcpServers": {"a": {"command": "x"}}}`, "// c\n{\"servers\": {\"a\": 1,},}", `{"servers": {}}`, "[", `{"a": [1, {"b": null}]}`, `{"mcpServers": {"mcp-tools": 1, "mcp-tools": 2}}`, `{"n": [1e400, -0, 1E+2, 0.5e-9999]}`, `{"mcpServers": {"mcp-tools": {"command": "x", "env": {"A": "b"}}}}`, "{\"servers\": {\"mcp-tools\": {\"command\": \"x\", /* c */ \"args\": [],},}}", "{\r\n}", "{\"servers\": {\r\n  \"a\": 1\r\n}}"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, vscode bool) {
		c := mustClient(t, "cursor")
		if vscode {
			c = mustClient(t, "vscode")
		}
		// A strict JSON client's file is refused exactly when encoding/json
		// finds it invalid (a BOM aside, which the clients' editors write).
		if !c.JSONC {
			trimmed := strings.TrimPrefix(in, "\xef\xbb\xbf")
			if _, err := Entries(c, []byte(in)); (err == nil) != json.Valid([]byte(trimmed)) && strings.TrimSpace(trimmed) != "" {
				t.Fatalf("Entries(%q) = %v, but json.Valid = %v", in, err, json.Valid([]byte(trimmed)))
			}
		}
		out, _, err := Merge(c, []byte(in), "mcp-tools", entry)
		if err != nil {
			return
		}
		before, err := Entries(c, []byte(in))
		if err != nil {
			t.Fatalf("Merge accepted what Entries refuses: %v", err)
		}
		after, err := Entries(c, out)
		if err != nil {
			t.Fatalf("Merge's output does not parse: %v\n%s", err, out)
		}
		have := map[string]bool{}
		for _, n := range after {
			have[n] = true
		}
		for _, n := range append(before, "mcp-tools") {
			if !have[n] {
				t.Fatalf("entry %q lost:\nin:  %q\nout: %q", n, in, out)
			}
		}
		// A file whose lines all end in CRLF keeps CRLF line ends.
		if bareLF := regexp.MustCompile(`(^|[^\r])\n`); strings.Contains(in, "\r\n") && !bareLF.MatchString(in) && bareLF.Match(out) {
			t.Fatalf("a CRLF file got LF line ends:\nin:  %q\nout: %q", in, out)
		}
		if !c.JSONC && !json.Valid(out) {
			t.Fatalf("strict JSON client got invalid JSON: %q", out)
		}
		// What a JSON reader (last duplicate wins) sees is the new entry.
		if !c.JSONC {
			var top, servers, got map[string]json.RawMessage
			var command string
			var args []string
			json.Unmarshal(bytes.TrimPrefix(out, []byte("\xef\xbb\xbf")), &top)
			json.Unmarshal(top[c.Key], &servers)
			json.Unmarshal(servers["mcp-tools"], &got)
			json.Unmarshal(got["command"], &command)
			json.Unmarshal(got["args"], &args)
			if command != entry.Command || !slices.Equal(args, entry.Args) {
				t.Fatalf("entry read back as %q %q:\nin:  %q\nout: %q", command, args, in, out)
			}
		}
	})
}
