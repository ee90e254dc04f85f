package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/mcp-tools/mcp-tools/telemetry"
)

// Paths of the operational endpoints (see OpsHandler).
const (
	PathMetrics = "/metrics"
	PathHealthz = "/healthz"
	PathReadyz  = "/readyz"
)

// metaRequestID is where recordRequestID keeps a call's JSON-RPC id: in
// the _meta of the request's embedded mcp.Request, which JSON never fills
// (CallToolRequest.Params shadows it), so a client cannot set it.
const metaRequestID = "mcp-tools/jsonrpcRequestId"

// recordRequestID is a BeforeCallTool hook: mcp-go hands the JSON-RPC id to
// hooks only, so it is noted on the request the tool handler then gets.
func recordRequestID(_ context.Context, id any, req *mcp.CallToolRequest) {
	if req == nil || id == nil {
		return
	}
	req.Request.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{metaRequestID: id}}
}

// requestIDString is a JSON-RPC id as telemetry reports it: a string as
// it is, a number in decimal (1000000, not 1e+06).
func requestIDString(id any) string {
	switch v := id.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(id)
}

// rawRequestID is the id a fast path reads, raw, as mcp-go hands it to
// the BeforeCallTool hook (a string, or a number as a float64), without
// decoding the usual shapes.
func rawRequestID(raw []byte) any {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : n-1])
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return f
	}
	var id any
	_ = json.Unmarshal(raw, &id)
	return id
}

// observeRequest puts what telemetry needs of the request into ctx: the
// JSON-RPC id, protocol version, session id (for protocol versions that
// have sessions), transport, and the client's trace context, from
// params._meta traceparent/tracestate (SEP-414) or else the HTTP headers.
// It returns ctx unchanged when tel is nil.
func observeRequest(ctx context.Context, tel *telemetry.Telemetry, req mcp.CallToolRequest) context.Context {
	if tel == nil {
		return ctx
	}
	r := &telemetry.Request{Transport: telemetry.TransportPipe, ProtocolVersion: mcpserver.RequestProtocolVersion(ctx)}
	if len(req.Header) > 0 { // mcp-go hands stdio calls an empty header
		r.Transport = telemetry.TransportTCP
	}
	if m := req.Request.Params.Meta; m != nil {
		if id, ok := m.AdditionalFields[metaRequestID]; ok {
			r.ID = requestIDString(id)
		}
	}
	if !mcp.IsModernProtocol(r.ProtocolVersion) {
		if cs := mcpserver.ClientSessionFromContext(ctx); cs != nil {
			r.SessionID = cs.SessionID()
		}
	}
	if m := req.Params.Meta; m != nil {
		r.TraceParent, _ = m.AdditionalFields["traceparent"].(string)
		r.TraceState, _ = m.AdditionalFields["tracestate"].(string)
	}
	if r.TraceParent == "" && len(req.Header) > 0 {
		r.TraceParent, r.TraceState = req.Header.Get("traceparent"), req.Header.Get("tracestate")
	}
	return telemetry.WithRequest(ctx, r)
}

// OpsHandler serves the operational endpoints: GET /metrics (metrics, when
// not nil: a telemetry.Telemetry's Handler), GET /healthz (200 while the
// process serves) and GET /readyz (200 until a shutdown begins, then 503,
// so a load balancer stops sending new sessions; 503 too while a shared
// state store cannot be reached, which a background ping checks every
// second, so the answer costs nothing). None of them takes a
// bearer token or touches a session; an Origin header that is not allowed
// gets 403, and so does a Host that is not loopback on a loopback
// listener (DNS rebinding), as on the MCP endpoints.
func (s *Server) OpsHandler(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	if metrics != nil {
		mux.Handle("GET "+PathMetrics, metrics)
	}
	mux.HandleFunc("GET "+PathHealthz, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET "+PathReadyz, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !s.ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "shutting down\n")
			return
		}
		if s.health != nil && s.health.down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "state store unreachable\n")
			return
		}
		io.WriteString(w, "ready\n")
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// On a loopback listener, a Host that is not loopback is a page
		// whose name was rebound to 127.0.0.1: a same-origin GET carries
		// no Origin, so only the Host tells. Scrapers on the machine
		// name the address they dial, or localhost.
		if rebinding(r) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, s.opts.AllowedOrigins) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed", o), http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// ready reports whether the server takes new calls.
func (s *Server) ready() bool {
	if s.notReady.Load() {
		return false
	}
	s.calls.mu.Lock()
	defer s.calls.mu.Unlock()
	return !s.calls.draining
}
