package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/config"
	"github.com/mcp-tools/mcp-tools/cmd/mcp-tools/internal/install"
)

const installUsage = `Usage: mcp-tools install CLIENT [--name NAME] [--dry-run] [-- SERVE-FLAGS...]
       mcp-tools install --list

Add mcp-tools to an MCP client's configuration, so that the client starts it
over stdio. CLIENT is claude-desktop, claude-code, cursor, vscode or windsurf.
The entry runs this binary (by its absolute path) as "serve" with the flags
after --; --root, --config and --state-key-file are made absolute. The file
is edited in place: other servers, settings and (for VS Code) comments are
kept, the old file is copied to FILE.bak, and a file that cannot be parsed is left alone. An entry
of the same name gets the new command and args, and keeps its env and other
settings. Restart the client afterwards.

Examples:
  mcp-tools install --list
  mcp-tools install claude-desktop
  mcp-tools install claude-desktop -- --root ~/notes --no-approval file_write
  mcp-tools install cursor --name notes -- --config ./tools.yaml
  mcp-tools install vscode --dry-run
`

// installCmd runs the install command.
func installCmd(args []string, stdout, stderr io.Writer) error {
	own, serveArgs := args, []string(nil)
	if i := slices.Index(args, "--"); i >= 0 {
		own, serveArgs = args[:i], args[i+1:]
	}
	fs := newFlagSet("install", installUsage)
	name := fs.String("name", "mcp-tools", "name of the server entry in the client's configuration")
	dryRun := fs.Bool("dry-run", false, "print the file as it would be written, and write nothing")
	list := fs.Bool("list", false, "list the clients and the file each one's entry goes to")
	pos, err := parse(fs, own, stdout)
	if err != nil {
		return err
	}
	if *list {
		return listClients(stdout)
	}
	if len(pos) != 1 {
		return usagef("want one client: %s", strings.Join(install.Names(), ", "))
	}
	client, ok := install.Lookup(pos[0])
	if !ok {
		return usagef("unknown client %q: use %s", pos[0], strings.Join(install.Names(), ", "))
	}
	if *name == "" {
		return usagef("--name is empty")
	}
	serveArgs, err = absServeArgs(serveArgs)
	if err != nil {
		return err
	}
	if !serviceBuild && slices.ContainsFunc(serveArgs, isStateFlag) {
		// The entry would never start.
		return usagef("--state: %v", errNoSharedState)
	}
	if !serviceBuild && configState(serveArgs) != "" {
		return usagef("--config: server.state: %v", errNoSharedState)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return err
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		// go run deletes the binary when it exits: an entry naming it
		// would never start.
		msg := fmt.Sprintf("%s is a temporary go run build; install a lasting binary first (go install github.com/mcp-tools/mcp-tools/cmd/mcp-tools@latest) and run its install", exe)
		if !*dryRun {
			return badConfig(errors.New(msg + "; nothing was written"))
		}
		fmt.Fprintf(stderr, "mcp-tools install: warning: %s\n", msg)
	}
	entry := install.Entry{Command: exe, Args: append([]string{"serve"}, serveArgs...)}
	r, err := install.Write(client, *name, entry, *dryRun)
	if err != nil {
		if errors.Is(err, install.ErrParse) {
			return badConfig(err)
		}
		return err
	}
	if *dryRun {
		fmt.Fprintf(stdout, "Would write %s:\n%s", r.Path, r.Content)
		return nil
	}
	verb := "Added"
	if r.Replaced {
		verb = "Replaced"
	}
	fmt.Fprintf(stdout, "%s %q in %s's configuration: %s\n", verb, *name, client.Title, r.Path)
	if r.Backup != "" {
		fmt.Fprintf(stdout, "The file as it was is in %s.\n", r.Backup)
	}
	fmt.Fprintf(stdout, "It runs: %s\nRestart %s to start it.\n", strings.Join(append([]string{exe}, hidePasswords(entry.Args)...), " "), client.Title)
	return nil
}

// configState returns the server.state of the config file serveArgs name
// with --config: "" when they name none, or one that does not load (serve
// will say why).
func configState(serveArgs []string) string {
	var c setup
	fs := newFlagSet("serve", serveUsage)
	c.register(fs, true)
	if _, err := parse(fs, slices.Clone(serveArgs), io.Discard); err != nil || c.configPath == "" {
		return ""
	}
	f, err := config.Load(c.configPath)
	if err != nil {
		return ""
	}
	return f.Server.State
}

// hidePasswords returns args with the password of the --state URL hidden,
// for printing.
func hidePasswords(args []string) []string {
	out := slices.Clone(args)
	for i := range out {
		if !isStateFlag(out[i]) {
			continue
		}
		_, val, hasVal := strings.Cut(out[i], "=")
		at := i
		if !hasVal {
			if at = i + 1; at >= len(out) {
				break
			}
			val = out[at]
		}
		val = redactURL(val) // never the password, parsable or not
		if hasVal {
			out[at] = out[i][:strings.Index(out[i], "=")+1] + val
		} else {
			out[at] = val
		}
	}
	return out
}

// listClients prints each client and the file its entry goes to.
func listClients(stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tAPP\tFILE")
	for _, c := range install.Clients {
		path, err := c.Path()
		if err != nil {
			return err
		}
		state := "not there yet"
		if _, err := os.Stat(path); err == nil {
			state = "exists"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s (%s)\n", c.Name, c.Title, path, state)
	}
	return tw.Flush()
}

// absServeArgs checks the serve flags as serve would parse them, and makes
// the paths of --root, --config and --state-key-file absolute: the client
// starts the server from a folder of its own choosing.
func absServeArgs(args []string) ([]string, error) {
	var c setup
	fs := newFlagSet("serve", serveUsage)
	c.register(fs, true)
	pos, err := parse(fs, slices.Clone(args), io.Discard)
	if errors.Is(err, errHelp) {
		return nil, usagef("the serve flags after -- include --help")
	}
	if err != nil {
		return nil, usagef("serve flags after --: %v", err)
	}
	if len(pos) > 0 {
		return nil, usagef("serve flags after --: unexpected arguments %q", pos)
	}
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		flagName, val, hasVal := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || (flagName != "root" && flagName != "config" && flagName != "state-key-file") {
			continue
		}
		at := i
		if !hasVal {
			at, i = i+1, i+1
			val = out[at]
		}
		if val == "" {
			// Serve reads an empty path as none given; made absolute it
			// would become the working folder (often the home folder).
			return nil, usagef("--%s is empty", flagName)
		}
		abs, err := absPath(val)
		if err != nil {
			return nil, err
		}
		if flagName == "root" {
			if st, err := os.Stat(abs); err != nil || !st.IsDir() {
				return nil, usagef("--root %s: not a folder", abs)
			}
		} else if _, err := os.Stat(abs); err != nil {
			return nil, usagef("--%s: %v", flagName, err)
		}
		if hasVal {
			out[at] = "--" + flagName + "=" + abs
		} else {
			out[at] = abs
		}
	}
	return out, nil
}

// absPath makes p absolute, expanding a leading ~ the shell left alone
// (as in --root=~/notes).
func absPath(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		p = filepath.Join(home, p[1:])
	}
	return filepath.Abs(p)
}
