package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// errHelp is returned when --help was asked for and printed.
var errHelp = errors.New("help printed")

// usageError is a bad flag, argument or configuration: exit status
// exitUsage. Its message is the problem alone, with no "usage:" prefix;
// hint asks run to point at the command's --help.
type usageError struct {
	err  error
	hint bool
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usagef makes a usageError that also points at --help.
func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...), hint: true}
}

// badConfig makes a usageError from a configuration problem, printed as is.
func badConfig(err error) error { return &usageError{err: err} }

// newFlagSet makes a flag set that prints nothing while parsing: parse
// prints the usage on --help, and run prints one line for a bad flag.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args, flags and positional arguments in any order (flags
// may follow the positional arguments; everything after "--" is
// positional), and returns the positional arguments. On --help it prints
// the usage to stdout and returns errHelp.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, errHelp
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// fs.Parse stops at the first non-flag, and consumes a "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// versionLine says which build this is: the module version (set by go
// install …@vX, or -ldflags "-X main.version=…") and the VCS revision the
// binary was built from, when the build recorded one; then, on a line of
// its own, whether it is the embedded or the service build.
func versionLine() string {
	v := moduleVersion()
	var rev, modified, when string
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			case "vcs.time":
				when = ", " + s.Value
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mcp-tools %s", v)
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		fmt.Fprintf(&b, " (revision %s%s%s)", rev, when, modified)
	}
	b.WriteString("\n" + buildName)
	return b.String()
}

// moduleVersion is the version the server reports in initialize: the one
// set with -ldflags, else the module version of the build (a tag when built
// by go install …@vX), else defaultVersion.
func moduleVersion() string {
	if version != defaultVersion {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return version
}
