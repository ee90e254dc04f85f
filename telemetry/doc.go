// Package telemetry makes a server's calls visible to an operator:
// Prometheus metrics, OpenTelemetry traces and the OpenTelemetry metric
// mcp.server.operation.duration.
//
// A Telemetry is built once (New) and handed to the server, which applies
// its Middleware to every tool at registration and calls its hooks when a
// session opens or closes (SessionOpened, SessionClosed) and when a
// person decides on a call (Decided). Remote tools report how their
// subprocesses exit and what status their endpoints answer through the
// remote.Observer it implements. Every method is safe on a nil
// *Telemetry, which does nothing: a server without telemetry pays nothing.
//
// The Prometheus metrics are kept and written by this package (the
// Prometheus client library, a megabyte and more of an idle process, is
// not used), in the text exposition format 0.0.4, byte for byte as the
// client library writes the same metrics, beside the go_* and process_*
// families of its default collectors. Handler serves them; WriteMetrics
// writes them for a program that embeds the server and serves metrics of
// its own, which sets Config.OmitRuntimeMetrics when those already hold
// the go_* and process_* families.
//
// Labels are bounded: a tool label is only ever the name of a tool some
// Middleware was built for (that is, a tool of the registry), anything
// else is counted under "_other"; outcomes are error kinds, exit codes
// and HTTP statuses fall in fixed ranges; no argument value and no session
// id is ever a label.
//
// Traces follow the OpenTelemetry MCP semantic conventions (semconv
// v1.41.0): one SERVER span per tools/call named "tools/call <tool>", its
// parent taken from the request's params._meta traceparent/tracestate
// (SEP-414) or from its HTTP headers (see Request), and a link to the
// span current when the call arrived, if any. Spans are made only
// when a TracerProvider is configured, or when Config.OTLP is set
// (otlpexport.FromEnv) and the standard OTEL_EXPORTER_OTLP_* variables
// ask for an OTLP export; otherwise no exporter is built, no goroutine
// started, and nothing is sent. This package does not link the
// OpenTelemetry SDK: otlpexport does, so that a program that never
// exports does not pay for it.
package telemetry
