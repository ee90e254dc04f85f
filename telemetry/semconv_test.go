package telemetry

import (
	"testing"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
)

// TestSemconvNames holds the names this package spells out to the
// semantic conventions they come from.
func TestSemconvNames(t *testing.T) {
	var d mcpconv.ServerOperationDuration
	for _, tt := range []struct{ got, want string }{
		{string(keyMCPMethodName), string(semconv.McpMethodNameKey)},
		{string(keyMCPProtocolVersion), string(semconv.McpProtocolVersionKey)},
		{string(keyMCPSessionID), string(semconv.McpSessionIDKey)},
		{string(keyGenAIOperationName), string(semconv.GenAIOperationNameKey)},
		{string(keyGenAIToolName), string(semconv.GenAIToolNameKey)},
		{string(keyGenAIToolCallArguments), string(semconv.GenAIToolCallArgumentsKey)},
		{string(keyGenAIToolCallResult), string(semconv.GenAIToolCallResultKey)},
		{string(keyJSONRPCRequestID), string(semconv.JSONRPCRequestIDKey)},
		{string(keyNetworkTransport), string(semconv.NetworkTransportKey)},
		{string(keyErrorType), string(semconv.ErrorTypeKey)},
		{operationExecuteTool, string(mcpconv.GenAIOperationNameExecuteTool)},
		{MethodToolsCall, string(mcpconv.MethodNameToolsCall)},
		{TransportPipe, string(mcpconv.NetworkTransportPipe)},
		{TransportTCP, string(mcpconv.NetworkTransportTCP)},
		{metricOperationDuration, d.Name()},
		{metricOperationDurationUnit, d.Unit()},
		{metricOperationDurationDesc, d.Description()},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
