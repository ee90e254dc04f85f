// Command demo holds the deterministic demo tools of the tool-use loop test
// (cmd/mcp-tools/loop_test.go), served as subprocess tools by
// testdata/demo/tools.yaml. The first argument names the tool:
//
//	search_information {"query"}          a small fixed fact table
//	get_stock_price    {"ticker"}         fixed simulated prices; unknown tickers fail
//	calculate_expression {"expression"}   the calculator built-in's evaluator
//	send_email {"to","subject","body"}    records what it would send to $OUTBOX
//
// They are not built into mcp-tools.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/mcp-tools/mcp-tools/tools/builtin/calc"
)

var facts = map[string]string{
	"capital of france":      "Paris",
	"capital of japan":       "Tokyo",
	"boiling point of water": "100 °C at sea level",
}

var prices = map[string]float64{"AAPL": 178.15, "MSFT": 415.5, "GOOG": 141.8}

func main() {
	var req struct {
		Arguments map[string]any `json:"arguments"`
	}
	out := json.NewEncoder(os.Stdout)
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil || len(os.Args) < 2 {
		out.Encode(map[string]any{"success": false, "error": "bad request"})
		return
	}
	arg := func(k string) string { s, _ := req.Arguments[k].(string); return s }
	ok := func(text string, structured map[string]any) {
		out.Encode(map[string]any{"success": true, "output": text, "structured": structured})
	}
	fail := func(msg string) { out.Encode(map[string]any{"success": false, "error": msg}) }

	switch os.Args[1] {
	case "search_information":
		q := strings.ToLower(strings.TrimSpace(arg("query")))
		for k, v := range facts {
			if strings.Contains(q, k) {
				ok(v, map[string]any{"answer": v})
				return
			}
		}
		fail(fmt.Sprintf("no information found for %q", arg("query")))
	case "get_stock_price":
		t := strings.ToUpper(arg("ticker"))
		p, found := prices[t]
		if !found {
			fail(fmt.Sprintf("unknown ticker %q", arg("ticker")))
			return
		}
		ok(fmt.Sprintf("%g", p), map[string]any{"ticker": t, "price": p})
	case "calculate_expression":
		v, err := calc.Eval(arg("expression"), calc.Config{})
		if err != nil {
			fail(err.Error())
			return
		}
		if f, isNum := v.(float64); isNum {
			ok(calc.Format(f), map[string]any{"result": f})
			return
		}
		ok(fmt.Sprint(v), map[string]any{"result": v})
	case "send_email":
		f, err := os.OpenFile(os.Getenv("OUTBOX"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			fail("cannot record the email: " + err.Error())
			return
		}
		defer f.Close()
		line, _ := json.Marshal(req.Arguments)
		fmt.Fprintf(f, "%s\n", line)
		ok("sent to "+arg("to"), map[string]any{"sent": true})
	default:
		fail("unknown demo tool " + os.Args[1])
	}
}
