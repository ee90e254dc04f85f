package server

import mcpserver "github.com/mark3labs/mcp-go/server"

// MCPOf exposes the mcp-go server to this package's external tests (the
// benchmarks measure the stack beneath any transport); it is not part of
// the API.
func MCPOf(s *Server) *mcpserver.MCPServer { return s.mcp }
