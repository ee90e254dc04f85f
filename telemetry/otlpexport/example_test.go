package otlpexport_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcp-tools/mcp-tools/telemetry"
	"github.com/mcp-tools/mcp-tools/telemetry/otlpexport"
)

// A server's telemetry that exports traces and the operation-duration
// metric over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT (or a per-signal
// endpoint) is set, and only Prometheus metrics otherwise (as here: no
// OTEL_* variable is set).
func ExampleFromEnv() {
	tel, err := telemetry.New(telemetry.Config{OTLP: otlpexport.FromEnv})
	if err != nil {
		log.Fatal(err) // a variable it cannot use, named
	}
	defer tel.Shutdown(context.Background()) // flushes the last spans
	// ... server.Options{Telemetry: tel} ...
	fmt.Println("tracing:", tel.Tracing())
	// Output: tracing: false
}
