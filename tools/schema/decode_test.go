package schema

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// decodeCases are arguments decodeArgs reads itself, and some it leaves to
// encoding/json (repeated names, invalid UTF-8, trailing data, bad JSON).
var decodeCases = []string{
	`{}`, `{"query":"golang","limit":10}`, `{"n":1e400,"m":-0.5e-3,"big":123456789012345678901234567890}`,
	`{"a":[1,"two",true,false,null,{"b":[]}],"c":{}}`, `{"s":"\u00e9\ud83d\ude00\n\"<>&"}`, `[1,2]`, `"str"`, `null`, `  {"x":1}  `,
	`{"a":1,"a":2}`, "{\"s\":\"\xff\"}", `{"x":1} {"y":2}`, `{"x":1}x`, `{"x":}`, `{`, ``, `{"x":01}`, `{"x":1,}`,
	"{\"x\":\"\\ud800\"}",
}

// TestDecodeArgsAsEncodingJSON: decodeArgs gives what jsonschema's own
// decoding (encoding/json with UseNumber) gives, value or error.
func TestDecodeArgsAsEncodingJSON(t *testing.T) {
	for _, c := range decodeCases {
		checkDecode(t, []byte(c))
	}
	// Past maxPooledArgs (the decoder is then not pooled), and a small
	// one after it on whatever decoder the pool holds.
	big := `{"a":[` + strings.Repeat(`{"k":"v","n":1.5},`, maxPooledArgs/10) + `null]}`
	checkDecode(t, []byte(big))
	checkDecode(t, []byte(`{"query":"after","limit":1}`))
}

// FuzzDecodeArgs: the same, for arbitrary bytes.
func FuzzDecodeArgs(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecode(t, b) })
}

func checkDecode(t *testing.T, b []byte) {
	t.Helper()
	want, wantErr := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	got, err := decodeArgs(b)
	if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%q: error %v, want %v", b, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %#v, want %#v", b, got, want)
	}
}
