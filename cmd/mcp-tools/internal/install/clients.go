// Package install adds an MCP server entry to the configuration file of an
// MCP client (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf),
// keeping everything else in the file as it was: other entries, key order,
// formatting, and comments where the format allows them.
//
// The edit is surgical: the file is parsed only to find where the entry
// goes, and the new bytes are spliced in. A file that cannot be parsed is
// refused, never rewritten.
package install

import (
	"fmt"
	"os"
	"path/filepath"
)

// Client is an MCP client whose configuration file install can edit.
type Client struct {
	// Name is what the install command takes: claude-desktop, claude-code,
	// cursor, vscode or windsurf.
	Name string
	// Title is the client's name for people.
	Title string
	// Key is the top-level object that maps server names to entries:
	// "mcpServers", or "servers" for VS Code.
	Key string
	// JSONC is true when the file may hold comments and trailing commas
	// (VS Code); they are kept.
	JSONC bool
	// Typed is true when entries carry "type": "stdio".
	Typed bool
	// where returns the file's path from the home and user config folders.
	where func(home, config string) string
}

// Clients lists the clients install knows, in the order --list prints them.
// Their files, per the clients' documentation:
//
//   - Claude Desktop: claude_desktop_config.json in the Claude folder of the
//     user config folder: ~/Library/Application Support/Claude on macOS,
//     %APPDATA%\Claude on Windows, ~/.config/Claude on Linux.
//   - Claude Code: ~/.claude.json, "mcpServers" (user scope).
//   - Cursor: ~/.cursor/mcp.json.
//   - VS Code: mcp.json in the user profile (Code/User in the user config
//     folder), with a top-level "servers"; JSON with comments.
//   - Windsurf: ~/.codeium/windsurf/mcp_config.json.
var Clients = []Client{
	{Name: "claude-desktop", Title: "Claude Desktop", Key: "mcpServers",
		where: func(home, config string) string { return filepath.Join(config, "Claude", "claude_desktop_config.json") }},
	{Name: "claude-code", Title: "Claude Code (user scope)", Key: "mcpServers", Typed: true,
		where: func(home, config string) string { return filepath.Join(home, ".claude.json") }},
	{Name: "cursor", Title: "Cursor", Key: "mcpServers",
		where: func(home, config string) string { return filepath.Join(home, ".cursor", "mcp.json") }},
	{Name: "vscode", Title: "VS Code (user profile)", Key: "servers", JSONC: true, Typed: true,
		where: func(home, config string) string { return filepath.Join(config, "Code", "User", "mcp.json") }},
	{Name: "windsurf", Title: "Windsurf", Key: "mcpServers",
		where: func(home, config string) string {
			return filepath.Join(home, ".codeium", "windsurf", "mcp_config.json")
		}},
}

// Lookup returns the client called name.
func Lookup(name string) (Client, bool) {
	for _, c := range Clients {
		if c.Name == name {
			return c, true
		}
	}
	return Client{}, false
}

// Names returns the clients' names.
func Names() []string {
	var out []string
	for _, c := range Clients {
		out = append(out, c.Name)
	}
	return out
}

// Path returns the client's configuration file for this user and system,
// from os.UserHomeDir and os.UserConfigDir (HOME; XDG_CONFIG_HOME on
// Linux; APPDATA on Windows).
func (c Client) Path() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	config, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.Name, err)
	}
	return c.where(home, config), nil
}

// Entry is the server entry install writes: how the client starts the
// server.
type Entry struct {
	// Command is the absolute path of the mcp-tools binary.
	Command string
	// Args are its arguments: serve and the serve flags.
	Args []string
}

// object returns the entry as the client's file spells it.
func (c Client) object(e Entry) any {
	args := e.Args
	if args == nil {
		args = []string{}
	}
	if c.Typed {
		return struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{"stdio", e.Command, args}
	}
	return struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{e.Command, args}
}
