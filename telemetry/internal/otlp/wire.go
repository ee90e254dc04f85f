package otlp

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// fields calls fn for each field of the protobuf message b, stopping at
// the first malformed one (an answer is only informative: what cannot be
// read is left out).
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64)) {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return
		}
		b = b[l:]
		switch typ {
		case protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return
			}
			fn(num, typ, nil, v)
			b = b[l:]
		case protowire.BytesType:
			v, l := protowire.ConsumeBytes(b)
			if l < 0 {
				return
			}
			fn(num, typ, v, 0)
			b = b[l:]
		default:
			l := protowire.ConsumeFieldValue(num, typ, b)
			if l < 0 {
				return
			}
			b = b[l:]
		}
	}
}

// partialSuccess reads an Export*ServiceResponse: its partial_success
// (field 1) holds the count of rejected items (1) and a message (2). A
// rejection, or a message, is an error, not worth a retry.
func partialSuccess(body []byte) error {
	var rejected uint64
	var msg string
	fields(body, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if num != 1 || typ != protowire.BytesType {
			return
		}
		fields(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) {
			switch {
			case num == 1 && typ == protowire.VarintType:
				rejected = n
			case num == 2 && typ == protowire.BytesType:
				msg = string(v)
			}
		})
	})
	if rejected == 0 && msg == "" {
		return nil
	}
	return fmt.Errorf("the collector rejected %d item(s): %s", rejected, quote(msg))
}

// statusMessage is ": " and the message of a google.rpc.Status body (its
// field 2), or "" when there is none.
func statusMessage(body []byte) string {
	var msg string
	fields(body, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if num == 2 && typ == protowire.BytesType {
			msg = string(v)
		}
	})
	if msg == "" {
		return ""
	}
	return ": " + quote(msg)
}

// quote shows a collector's message on one line, cut at 512 bytes.
func quote(msg string) string {
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	return strconv.Quote(msg)
}

// gRPC status codes this package acts on.
const (
	codeOK                = 0
	codeCanceled          = 1
	codeUnknown           = 2
	codeDeadlineExceeded  = 4
	codeResourceExhausted = 8
	codeAborted           = 10
	codeOutOfRange        = 11
	codeInternal          = 13
	codeUnavailable       = 14
	codeDataLoss          = 15
	codeUnauthenticated   = 16
	codePermissionDenied  = 7
	codeUnimplemented     = 12
)

// grpcResult reads a gRPC answer: the status from the trailers (or the
// headers, for a trailers-only answer), then the response message.
func grpcResult(resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusOK && resp.Header.Get("Grpc-Status") == "" {
		code := codeUnknown
		switch resp.StatusCode {
		case http.StatusBadRequest:
			code = codeInternal
		case http.StatusUnauthorized:
			code = codeUnauthenticated
		case http.StatusForbidden:
			code = codePermissionDenied
		case http.StatusNotFound:
			code = codeUnimplemented
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			code = codeUnavailable
		}
		return grpcError(code, "HTTP "+resp.Status, "")
	}
	status, md := resp.Trailer, "trailers"
	if status.Get("Grpc-Status") == "" {
		status, md = resp.Header, "headers"
	}
	s := status.Get("Grpc-Status")
	if s == "" {
		return grpcError(codeInternal, "the answer has no grpc-status in its "+md, "")
	}
	code, err := strconv.Atoi(s)
	if err != nil {
		return grpcError(codeUnknown, "grpc-status "+s, "")
	}
	if code != codeOK {
		raw := status.Get("Grpc-Message")
		msg, err := url.PathUnescape(raw)
		if err != nil {
			msg = raw // as the gRPC specification says
		}
		return grpcError(code, quote(msg), status.Get("Grpc-Status-Details-Bin"))
	}
	// One response message: a compressed flag, a length, the message.
	if len(body) < 5 {
		return nil
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if uint64(n) > uint64(len(body)-5) {
		return nil
	}
	msg := body[5 : 5+n]
	if body[0] != 0 {
		// Compressed as the request was (grpc-go answers so).
		if !strings.EqualFold(resp.Header.Get("Grpc-Encoding"), "gzip") {
			return nil
		}
		zr, err := gzip.NewReader(bytes.NewReader(msg))
		if err != nil {
			return nil
		}
		if msg, err = io.ReadAll(io.LimitReader(zr, maxResponseBytes)); err != nil {
			return nil
		}
	}
	return partialSuccess(msg)
}

// grpcError is the error for a gRPC status, retryable when OpenTelemetry's
// OTLP/gRPC exporters retry it: RESOURCE_EXHAUSTED only when the server
// says when to retry (a RetryInfo, of no delay included).
func grpcError(code int, msg, details string) error {
	err := fmt.Errorf("collector answered gRPC status %d (%s): %s", code, codeName(code), msg)
	switch code {
	case codeCanceled, codeDeadlineExceeded, codeAborted, codeOutOfRange, codeUnavailable, codeDataLoss:
		d, _ := retryDelay(details)
		return &retryable{err: err, after: d}
	case codeResourceExhausted:
		if d, ok := retryDelay(details); ok {
			return &retryable{err: err, after: d}
		}
	}
	return err
}

// codeName names the codes a collector is likely to send.
func codeName(code int) string {
	names := map[int]string{
		codeCanceled: "CANCELLED", codeUnknown: "UNKNOWN", 3: "INVALID_ARGUMENT", codeDeadlineExceeded: "DEADLINE_EXCEEDED",
		5: "NOT_FOUND", 6: "ALREADY_EXISTS", codePermissionDenied: "PERMISSION_DENIED", codeResourceExhausted: "RESOURCE_EXHAUSTED",
		9: "FAILED_PRECONDITION", codeAborted: "ABORTED", codeOutOfRange: "OUT_OF_RANGE", codeUnimplemented: "UNIMPLEMENTED",
		codeInternal: "INTERNAL", codeUnavailable: "UNAVAILABLE", codeDataLoss: "DATA_LOSS", codeUnauthenticated: "UNAUTHENTICATED",
	}
	if n, ok := names[code]; ok {
		return n
	}
	return "code " + strconv.Itoa(code)
}

// retryDelay reads the google.rpc.RetryInfo in a grpc-status-details-bin
// value (a google.rpc.Status whose details (3) are Any messages); ok
// when there is one, even of no delay.
func retryDelay(details string) (d time.Duration, ok bool) {
	if details == "" {
		return 0, false
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(details, "="))
	if err != nil {
		return 0, false
	}
	fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if num != 3 || typ != protowire.BytesType {
			return
		}
		var typeURL string
		var value []byte
		fields(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
			switch {
			case num == 1 && typ == protowire.BytesType:
				typeURL = string(v)
			case num == 2 && typ == protowire.BytesType:
				value = v
			}
		})
		if !strings.HasSuffix(typeURL, "/google.rpc.RetryInfo") {
			return
		}
		ok = true
		fields(value, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
			if num != 1 || typ != protowire.BytesType {
				return
			}
			var secs, nanos uint64
			fields(v, func(num protowire.Number, typ protowire.Type, _ []byte, n uint64) {
				switch {
				case num == 1 && typ == protowire.VarintType:
					secs = n
				case num == 2 && typ == protowire.VarintType:
					nanos = n
				}
			})
			// Seconds are an int64 (a negative one is no delay); a
			// delay past a Duration's range is the longest, so that the
			// retry loop gives up as OpenTelemetry's exporters do.
			switch {
			case secs > math.MaxInt64 || nanos >= 1e9:
			case secs >= uint64(math.MaxInt64/time.Second):
				d = math.MaxInt64
			default:
				d = time.Duration(secs)*time.Second + time.Duration(nanos)
			}
		})
	})
	return d, ok
}

var errStopped = errors.New("otlp: the exporter is shut down")
