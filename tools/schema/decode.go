package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxPooledArgs is the size of the largest arguments whose decoder goes
// back to the pool.
const maxPooledArgs = 64 << 10

// decodeArgs decodes args into what the validator walks: map[string]any,
// []any, json.Number, string, bool and nil, as encoding/json with
// UseNumber makes them. Well-formed arguments (valid UTF-8, no repeated
// member names, nothing after the value) are read in place with a pooled
// jsontext decoder. Anything else goes to jsonschema.UnmarshalJSON
// (encoding/json), so that its answer, and its error message, stay
// exactly what they were.
func decodeArgs(args []byte) (any, error) {
	d := decoders.Get().(*argDecoder)
	d.b = *bytes.NewBuffer(args) // read in place: jsontext does not copy a bytes.Buffer
	d.d.Reset(&d.b)
	v, err := d.value()
	if err == nil {
		if _, end := d.d.ReadToken(); end != io.EOF {
			err = errTrailing
		}
	}
	d.b = bytes.Buffer{}
	d.d.Reset(&d.b)
	if len(args) <= maxPooledArgs {
		decoders.Put(d) // a decoder keeps what the largest arguments it read needed
	}
	if err == nil {
		return v, nil
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(args))
}

type argDecoder struct {
	b bytes.Buffer
	d *jsontext.Decoder
}

var decoders = sync.Pool{New: func() any {
	d := &argDecoder{}
	d.d = jsontext.NewDecoder(&d.b)
	return d
}}

// errTrailing stops the fast decoding; the slow path explains the problem.
var errTrailing = errors.New("not a single JSON value")

func (d *argDecoder) value() (any, error) {
	tok, err := d.d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for d.d.PeekKind() != '}' {
			tok, err := d.d.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next read voids tok
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		_, err := d.d.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for d.d.PeekKind() != ']' {
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.d.ReadToken()
		return a, err
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	}
	return nil, errTrailing
}
