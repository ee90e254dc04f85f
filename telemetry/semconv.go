package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The names of the OpenTelemetry semantic conventions (v1.41.0, the MCP
// and GenAI ones) this package writes. They are spelled here rather than
// imported: the semconv packages cost every process, exporting or not, a
// package initialisation and its pages (about 0.1 MiB of idle memory for
// these two); a test holds each name to go.opentelemetry.io/otel/semconv.
const (
	keyMCPMethodName          = attribute.Key("mcp.method.name")
	keyMCPProtocolVersion     = attribute.Key("mcp.protocol.version")
	keyMCPSessionID           = attribute.Key("mcp.session.id")
	keyGenAIOperationName     = attribute.Key("gen_ai.operation.name")
	keyGenAIToolName          = attribute.Key("gen_ai.tool.name")
	keyGenAIToolCallArguments = attribute.Key("gen_ai.tool.call.arguments")
	keyGenAIToolCallResult    = attribute.Key("gen_ai.tool.call.result")
	keyJSONRPCRequestID       = attribute.Key("jsonrpc.request.id")
	keyNetworkTransport       = attribute.Key("network.transport")
	keyErrorType              = attribute.Key("error.type")

	// operationExecuteTool is gen_ai.operation.name of a tool call.
	operationExecuteTool = "execute_tool"

	// metricOperationDuration is the MCP server's duration histogram,
	// with its unit and description.
	metricOperationDuration     = "mcp.server.operation.duration"
	metricOperationDurationUnit = "s"
	metricOperationDurationDesc = "MCP request or notification duration as observed on the receiver from the time it was received until the result or ack is sent."
)

// operationDuration records mcp.server.operation.duration.
type operationDuration struct{ h metric.Float64Histogram }

func newOperationDuration(m metric.Meter, buckets []float64) (operationDuration, error) {
	h, err := m.Float64Histogram(metricOperationDuration, metric.WithUnit(metricOperationDurationUnit),
		metric.WithDescription(metricOperationDurationDesc), metric.WithExplicitBucketBoundaries(buckets...))
	return operationDuration{h}, err
}

// record records seconds for a tools/call with attrs (which do not
// include mcp.method.name: record adds it).
func (d operationDuration) record(ctx context.Context, seconds float64, attrs []attribute.KeyValue) {
	if !d.h.Enabled(ctx) {
		return
	}
	d.h.Record(ctx, seconds, metric.WithAttributes(append(attrs[:len(attrs):len(attrs)], keyMCPMethodName.String(MethodToolsCall))...))
}
