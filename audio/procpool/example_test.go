package procpool_test

import (
	"context"
	"fmt"

	"github.com/audiopost/audiopost/audio/procpool"
)

// A server makes one pool and hands it to its work through the context:
// every program started under it waits for a slot.
func ExampleCommand() {
	pool := procpool.New(procpool.Config{Size: 2})
	ctx := procpool.With(context.Background(), pool)
	out, err := procpool.Command(ctx, "echo", "hello").Output()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s%d of %d running, %d at most\n", out, pool.Running(), pool.Size(), pool.Peak())
	// Output:
	// hello
	// 0 of 2 running, 1 at most
}

// Work that runs several programs together takes their slots at once,
// so that it never holds some while it waits for the others.
func ExampleReserve() {
	pool := procpool.New(procpool.Config{Size: 4})
	ctx, release, err := procpool.Reserve(procpool.With(context.Background(), pool), 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	a, b := procpool.Command(ctx, "sleep", "0"), procpool.Command(ctx, "sleep", "0")
	if err := a.Start(); err != nil {
		fmt.Println(err)
		return
	}
	if err := b.Start(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Wait(), b.Wait(), pool.Overdrawn())
	_, _, err = procpool.Reserve(procpool.With(context.Background(), pool), 5)
	fmt.Println(err)
	// Output:
	// <nil> <nil> 0
	// procpool: reservation larger than the pool: 5 programs at once, the pool runs 4
}
