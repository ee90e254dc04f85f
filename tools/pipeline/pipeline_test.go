package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-tools/mcp-tools/tools"
	"github.com/mcp-tools/mcp-tools/tools/pipeline"
	"github.com/mcp-tools/mcp-tools/typed"
)

type priceIn struct {
	Ticker string `json:"ticker"`
}
type priceOut struct {
	Price float64 `json:"price"`
}

var price = typed.MustNew("get_price", "Price of a ticker.", func(_ context.Context, in priceIn) (priceOut, error) {
	if in.Ticker != "AAPL" {
		return priceOut{}, tools.Failed("unknown ticker %q", in.Ticker)
	}
	return priceOut{Price: 178.15}, nil
})

// double is a plain tool: it doubles the number it gets, and records it.
func double(seen *[]string) tools.Tool {
	return tools.NewPlain(tools.Info{Name: "double", Description: "Double a number."}, func(_ context.Context, in string) (tools.Result, error) {
		*seen = append(*seen, in)
		f, err := strconv.ParseFloat(strings.TrimSpace(in), 64)
		if err != nil {
			return tools.Result{}, tools.InvalidArgs("not a number: %q", in)
		}
		return tools.Text(strconv.FormatFloat(2*f, 'f', -1, 64)), nil
	})
}

func call(t *testing.T, p tools.Tool, args string) tools.Outcome {
	t.Helper()
	return tools.Settle(p.Call(context.Background(), []byte(args)))
}

func TestPipeline(t *testing.T) {
	jp, err := pipeline.JSONPath("$.price")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := pipeline.Template("{{.Structured.price}}")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		steps   func(seen *[]string) []pipeline.Step
		onError pipeline.OnError
		args    string
		want    string // text, or "Error: ..." prefix
		seen    []string
	}{
		{"jsonpath adapter", func(seen *[]string) []pipeline.Step {
			return []pipeline.Step{{Tool: price, Adapter: jp}, {Tool: double(seen)}}
		}, pipeline.FailFast, `{"ticker":"AAPL"}`, "356.3", []string{"178.15"}},
		{"template adapter", func(seen *[]string) []pipeline.Step {
			return []pipeline.Step{{Tool: price, Adapter: tmpl}, {Tool: double(seen)}}
		}, pipeline.FailFast, `{"ticker":"AAPL"}`, "356.3", []string{"178.15"}},
		{"fail fast skips the rest", func(seen *[]string) []pipeline.Step {
			return []pipeline.Step{{Tool: price, Adapter: jp}, {Tool: double(seen)}}
		}, pipeline.FailFast, `{"ticker":"ZZZZ"}`, `Error: step 1 (get_price) failed: unknown ticker "ZZZZ"`, nil},
		{"continue hands the error on", func(seen *[]string) []pipeline.Step {
			return []pipeline.Step{{Tool: price, Adapter: jp}, {Tool: double(seen)}}
		}, pipeline.Continue, `{"ticker":"ZZZZ"}`, `Error: step 2 (double) failed: not a number`, []string{`unknown ticker "ZZZZ"`}},
		{"plain to plain", func(seen *[]string) []pipeline.Step {
			return []pipeline.Step{{Tool: double(seen)}, {Tool: double(seen)}}
		}, pipeline.FailFast, `{"input":"1.5"}`, "6", []string{"1.5", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []string
			p, err := pipeline.New(pipeline.Config{Name: "p", Description: "d", Steps: tt.steps(&seen), OnError: tt.onError})
			if err != nil {
				t.Fatal(err)
			}
			r := call(t, p, tt.args)
			got := r.Text
			if r.Err != nil {
				got = "Error: " + r.Err.Message
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if strings.Join(seen, "|") != strings.Join(tt.seen, "|") {
				t.Errorf("double saw %q, want %q", seen, tt.seen)
			}
		})
	}
}

func TestPipelinePublishesFirstStepsSchema(t *testing.T) {
	var seen []string
	jp, _ := pipeline.JSONPath("$.price")
	p, err := pipeline.New(pipeline.Config{Name: "p", Description: "d", Steps: []pipeline.Step{{Tool: price, Adapter: jp}, {Tool: double(&seen)}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(p.Info().InputSchema) != string(price.Info().InputSchema) {
		t.Errorf("input schema = %s, want the first step's", p.Info().InputSchema)
	}
	if got := p.Steps(); strings.Join(got, ",") != "get_price,double" {
		t.Errorf("Steps = %v", got)
	}
}

type needsTicker struct {
	Ticker string `json:"ticker"`
	Qty    int    `json:"qty"`
}

func TestFitCheckedWhenBuilt(t *testing.T) {
	buy := typed.MustNew("buy", "Buy.", func(_ context.Context, in needsTicker) (string, error) { return "ok", nil })
	_, err := pipeline.New(pipeline.Config{Name: "p", Description: "d", Steps: []pipeline.Step{{Tool: price}, {Tool: buy}}})
	if err == nil || !strings.Contains(err.Error(), `buy requires "ticker"`) {
		t.Errorf("New = %v, want a fit error naming the missing field", err)
	}
	// An adapter in between takes responsibility for the fit.
	tmpl, _ := pipeline.Template(`{"ticker":"AAPL","qty":1}`)
	if _, err := pipeline.New(pipeline.Config{Name: "p", Description: "d", Steps: []pipeline.Step{{Tool: price, Adapter: tmpl}, {Tool: buy}}}); err != nil {
		t.Errorf("with an adapter: %v", err)
	}
}

func TestPipelineStopsWhenCancelled(t *testing.T) {
	ran := 0
	slow := tools.NewPlain(tools.Info{Name: "slow", Description: "d"}, func(ctx context.Context, in string) (tools.Result, error) {
		ran++
		<-ctx.Done()
		return tools.Result{}, &tools.Error{Kind: tools.KindCancelled, Message: "cancelled", Err: ctx.Err()}
	})
	p, _ := pipeline.New(pipeline.Config{Name: "p", Description: "d", OnError: pipeline.Continue, Steps: []pipeline.Step{{Tool: slow}, {Tool: slow}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Call(ctx, []byte(`{"input":"x"}`))
	if !errors.Is(err, &tools.Error{Kind: tools.KindCancelled}) || ran != 1 {
		t.Errorf("err = %v after %d steps, want cancelled after the first", err, ran)
	}
}

// TestCallWith: with a caller, every step runs through it (a server's
// governed call), never the step tool directly; the pipeline itself is not
// changed, so the same pipeline runs either way, concurrently.
func TestCallWith(t *testing.T) {
	var seen []string
	p, _ := pipeline.New(pipeline.Config{Name: "p", Description: "d", Steps: []pipeline.Step{{Tool: double(&seen)}}})
	var calls []string
	governed := func(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
		calls = append(calls, name)
		return tools.Text("governed"), nil
	}
	r := tools.Settle(p.CallWith(context.Background(), json.RawMessage(`{"input":"1"}`), governed))
	if r.Text != "governed" || strings.Join(calls, ",") != "double" || len(seen) != 0 {
		t.Errorf("CallWith ran %q (caller saw %v, direct %d), want only the caller", r.Text, calls, len(seen))
	}
	if r := call(t, p, `{"input":"1"}`); r.Err != nil || len(seen) != 1 {
		t.Errorf("Call after CallWith = %+v (direct %d): want the step called directly", r, len(seen))
	}
}

type loginIn struct {
	User     string `json:"user"`
	Password string `json:"password" secret:"true"`
}
type tokenOut struct {
	Token string `json:"token"`
}
type fetchIn struct {
	Token string `json:"token" secret:"true"`
}
type keyOut struct {
	Key string `json:"key"`
}

// TestStepLogsHideEachStepsSecrets runs a pipeline whose every step takes
// a secret (the first its password, the second the token the first made,
// the third, a plain tool, its whole input) with a logger at TRACE, and
// checks that no planted secret reaches the log.
func TestStepLogsHideEachStepsSecrets(t *testing.T) {
	const planted = "PLANTED"
	login := typed.MustNew("login", "d", func(_ context.Context, in loginIn) (tokenOut, error) {
		return tokenOut{Token: "tok-" + planted}, nil
	})
	fetch := typed.MustNew("fetch", "d", func(_ context.Context, in fetchIn) (keyOut, error) {
		if in.Token != "tok-"+planted {
			return keyOut{}, tools.Failed("wrong token %q", in.Token)
		}
		return keyOut{Key: "key-" + planted}, nil
	})
	var signed string
	sign := tools.NewPlain(tools.Info{Name: "sign", Secret: []string{"input"}}, func(_ context.Context, in string) (tools.Result, error) {
		signed = in
		return tools.Text("signed"), nil
	})
	handlers := []struct {
		name string
		new  func(w *bytes.Buffer) slog.Handler
	}{
		{"text", func(w *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.Level(-8)})
		}},
		{"json", func(w *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.Level(-8)})
		}},
	}
	for _, h := range handlers {
		t.Run(h.name, func(t *testing.T) {
			var logs bytes.Buffer
			p, err := pipeline.New(pipeline.Config{
				Name:   "signed_fetch",
				Steps:  []pipeline.Step{{Tool: login}, {Tool: fetch}, {Tool: sign}},
				Logger: slog.New(h.new(&logs)),
			})
			if err != nil {
				t.Fatal(err)
			}
			res := call(t, p, `{"user":"ann","password":"pw-`+planted+`","PASSWORD":"pw2-`+planted+`"}`)
			if res.Err != nil || res.Text != "signed" {
				t.Fatalf("Call = %q, %v; want signed", res.Text, res.Err)
			}
			if !strings.Contains(signed, "key-"+planted) {
				t.Fatalf("the last step got %q, want the key (the secrets must still flow between steps)", signed)
			}
			out := logs.String()
			if n := strings.Count(out, "pipeline step done"); n != 3 {
				t.Fatalf("the log has %d step lines, want 3:\n%s", n, out)
			}
			if strings.Contains(out, planted) {
				t.Errorf("a secret reached the log:\n%s", out)
			}
			// password and PASSWORD in step 1's input, the token in step 1's
			// output and step 2's input, the key in step 2's output and step
			// 3's input.
			if n := strings.Count(out, tools.Hidden); n != 6 {
				t.Errorf("the log hides %d values, want 6:\n%s", n, out)
			}
		})
	}
}

// TestStepLogBounded: a step's input at DEBUG is shown up to ten times the
// server's LogTruncate, as the server's DEBUG line shows a call's, and
// not read whole: a megabyte of input is not a megabyte of log.
func TestStepLogBounded(t *testing.T) {
	upper := tools.NewPlain(tools.Info{Name: "upper"}, func(_ context.Context, in string) (tools.Result, error) {
		return tools.Text(strings.ToUpper(in)), nil
	})
	tests := []struct {
		name     string
		truncate int
		shown    int
	}{
		{"LogTruncate 5", 5, 50},
		{"the server's default", 0, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			p, err := pipeline.New(pipeline.Config{Name: "twice", Steps: []pipeline.Step{{Tool: upper}, {Tool: upper}},
				Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), LogTruncate: tt.truncate})
			if err != nil {
				t.Fatal(err)
			}
			input := strings.Repeat("a", 1<<20)
			if res := call(t, p, `{"input":"`+input+`"}`); res.Err != nil {
				t.Fatal(res.Err)
			}
			want := strings.Repeat("a", tt.shown) + "…(" + strconv.Itoa(len(input)-tt.shown) + " more bytes)"
			lines, outputs := 0, 0
			for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
				var rec struct{ Msg, Input, Output string }
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatal(err)
				}
				switch rec.Msg {
				case "pipeline step":
					lines++
					if got := strings.ToLower(rec.Input); got != want {
						t.Errorf("step input logged as %.80s… (%d bytes), want %.80s… (%d bytes)", got, len(got), want, len(want))
					}
				case "pipeline step done":
					// The output, the next step's input or the pipeline's
					// result, is bounded the same way.
					outputs++
					if got := strings.ToLower(rec.Output); got != want {
						t.Errorf("step output logged as %.80s… (%d bytes), want %.80s… (%d bytes)", got, len(got), want, len(want))
					}
				}
			}
			if lines != 2 || outputs != 2 {
				t.Errorf("%d step lines and %d step-done lines, want 2 of each", lines, outputs)
			}
		})
	}
}

// TestStepErrorLogBounded: a failed step's error at DEBUG is cut as its
// output is: the message can quote its input (the plain tool names a
// repeated member), a megabyte of which is not a megabyte of log.
func TestStepErrorLogBounded(t *testing.T) {
	upper := tools.NewPlain(tools.Info{Name: "upper"}, func(_ context.Context, in string) (tools.Result, error) {
		return tools.Text(strings.ToUpper(in)), nil
	})
	var logs bytes.Buffer
	p, err := pipeline.New(pipeline.Config{Name: "twice", Steps: []pipeline.Step{{Tool: upper}, {Tool: upper}},
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), LogTruncate: 5})
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("a", 1<<20)
	if res := call(t, p, `{"input":"x","`+name+`":1,"`+name+`":1}`); res.Err == nil {
		t.Fatal("a repeated member name was accepted")
	}
	done := 0
	for l := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var rec struct{ Msg, Error string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Msg != "pipeline step done" {
			continue
		}
		done++
		if n := len(rec.Error); rec.Error == "" || n > 50*4+len("…(1048576 more bytes)") {
			t.Errorf("step error logged as %.80s… (%d bytes), want at most 50 characters and a mark", rec.Error, n)
		}
	}
	if done != 1 {
		t.Errorf("%d step-done lines, want 1", done)
	}
}

// TestJSONPathOverlappingMatches: matches may nest, so the JSON of several
// can be far larger than the output they come from ($..price on prices
// nested a thousand deep repeats the innermost value a thousand times);
// that is refused, while several matches that do not nest still come out
// as one JSON array.
func TestJSONPathOverlappingMatches(t *testing.T) {
	jp, err := pipeline.JSONPath("$..price")
	if err != nil {
		t.Fatal(err)
	}
	const depth = 1000
	nested := strings.Repeat(`{"price":`, depth) + `"` + strings.Repeat("x", 8<<10) + `"` + strings.Repeat("}", depth)
	r, err := jp(context.Background(), tools.Text(nested))
	if err == nil || !strings.Contains(err.Error(), "bytes of JSON") {
		t.Errorf("nested prices: %d bytes of text from %d, err %v; want an error", len(r.Text), len(nested), err)
	}
	r, err = jp(context.Background(), tools.Result{Structured: map[string]any{"items": []any{map[string]any{"price": 1.5}, map[string]any{"price": "<2>"}}}})
	if want := `[1.5,"\u003c2\u003e"]`; err != nil || r.Text != want {
		t.Errorf("two prices = %q, %v; want %q", r.Text, err, want)
	}
}

// TestStepLogsHideSecretsThroughAdapters: when an adapter reshapes a step's
// output, the next step's secret fields do not name its secrets there (the
// first step's "access", or its nested "creds.token", becomes the second's
// secret "token"): the output is hidden from the log, and the next step's
// input line, redacted, shows what the adapter made.
func TestStepLogsHideSecretsThroughAdapters(t *testing.T) {
	const planted = "PLANTED"
	login := tools.New(tools.Info{Name: "login", Description: "d"}, func(_ context.Context, _ json.RawMessage) (tools.Result, error) {
		text := `{"access":"tok-` + planted + `","creds":{"token":"tok-` + planted + `"}}`
		var v map[string]any
		err := json.Unmarshal([]byte(text), &v)
		return tools.Result{Text: text, Structured: v}, err
	})
	fetch := typed.MustNew("fetch", "d", func(_ context.Context, in fetchIn) (keyOut, error) {
		if in.Token != "tok-"+planted {
			return keyOut{}, tools.Failed("wrong token")
		}
		return keyOut{Key: "key"}, nil
	})
	tmpl, err := pipeline.Template(`{"token":"{{.Structured.access}}"}`)
	if err != nil {
		t.Fatal(err)
	}
	jp, err := pipeline.JSONPath("$.creds")
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]pipeline.Adapter{"template": tmpl, "jsonpath": jp} {
		t.Run(name, func(t *testing.T) {
			var logs bytes.Buffer
			p, err := pipeline.New(pipeline.Config{Name: "p", Steps: []pipeline.Step{{Tool: login, Adapter: a}, {Tool: fetch}},
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			if res := call(t, p, `{}`); res.Err != nil || res.Text == "" {
				t.Fatalf("Call = %q, %v", res.Text, res.Err)
			}
			if strings.Contains(logs.String(), planted) {
				t.Errorf("a secret reached the log:\n%s", logs.String())
			}
			if n := strings.Count(logs.String(), tools.Hidden); n != 2 {
				t.Errorf("the log hides %d values, want 2 (step 1's output, step 2's token):\n%s", n, logs.String())
			}
		})
	}
}

// TestProgressAcrossSteps: each step reports its own progress from zero
// (a subprocess's 0.5 of 1, an approval's heartbeats 1, 2, 3 with no
// total), but a call's progress must increase with each notification
// (MCP): the pipeline reports step i's progress within [i, i+1] of as many
// as it has steps, and drops a report that would not increase.
func TestProgressAcrossSteps(t *testing.T) {
	type report struct{ progress, total float64 }
	step := func(name string, reports ...report) tools.Tool {
		return tools.NewPlain(tools.Info{Name: name, Description: "d"}, func(ctx context.Context, in string) (tools.Result, error) {
			for _, r := range reports {
				tools.ReportProgress(ctx, r.progress, r.total, name)
			}
			return tools.Text(in), nil
		})
	}
	p, err := pipeline.New(pipeline.Config{Name: "p", Description: "d", Steps: []pipeline.Step{
		{Tool: step("a", report{0, 2}, report{1, 2}, report{2, 2})},
		{Tool: step("b", report{1, 0}, report{2, 0}, report{3, 0})},
		{Tool: step("c", report{0.5, 1}, report{0.25, 1}, report{1, 1})},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []report
	ctx := tools.WithProgress(context.Background(), func(progress, total float64, _ string) {
		got = append(got, report{progress, total})
	})
	if _, err := p.Call(ctx, json.RawMessage(`{"input":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if len(got) < 6 {
		t.Fatalf("got %v, want most of the steps' reports", got)
	}
	for i, r := range got {
		if r.total != 3 || r.progress < 0 || r.progress > 3 || i > 0 && r.progress <= got[i-1].progress {
			t.Fatalf("reports %v: #%d is not an increase within 3 steps", got, i)
		}
	}
}
