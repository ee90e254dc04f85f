package state_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-tools/mcp-tools/state"
)

// A budget of three calls an hour for one client: Take grants the first
// three and refuses the rest until the counter expires.
func ExampleMemory_Take() {
	ctx := context.Background()
	store := state.NewMemory()
	defer store.Close()

	for call := 1; call <= 5; call++ {
		ok, err := store.Take(ctx, "budget:client-42", 3, time.Hour)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("call %d allowed: %v\n", call, ok)
	}
	used, _ := store.Get(ctx, "budget:client-42", 0)
	fmt.Printf("used: %s\n", used)
	// Output:
	// call 1 allowed: true
	// call 2 allowed: true
	// call 3 allowed: true
	// call 4 allowed: false
	// call 5 allowed: false
	// used: 3
}
