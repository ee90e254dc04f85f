package lazyre

import (
	"fmt"
	"testing"
)

func TestNewCompilesOnceOnFirstUse(t *testing.T) {
	re := New(`^a+$`)
	first := re()
	if !first.MatchString("aaa") || first.MatchString("ab") {
		t.Fatalf("%q matches wrongly", first)
	}
	if re() != first {
		t.Fatal("second call compiled the expression again")
	}
}

func TestNewPanicsOnFirstUseOfABadExpression(t *testing.T) {
	re := New(`(`) // must not panic here
	defer func() {
		if recover() == nil {
			t.Fatal("a bad expression did not panic on first use")
		}
	}()
	re()
}

func ExampleNew() {
	word := New(`\w+`) // nothing is compiled yet
	fmt.Println(word().FindString("  hello, world"))
	// Output: hello
}
