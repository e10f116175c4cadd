// Command build writes audiopost's in-browser pages into a folder that
// any static web host, or audiopost serve -browser, can serve:
//
//	go run ./transport/browser/build -o DIR
//
// It compiles the engine to WebAssembly (GOOS=js GOARCH=wasm), so it
// runs in a checkout of the module with the go command on PATH, and
// prints the files it wrote with their sizes. See package browser.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/audiopost/audiopost/transport/browser"
)

func main() {
	out := flag.String("o", "", "the folder to write the pages to (made if missing)")
	debug := flag.Bool("debug", false, "keep the WebAssembly's symbol names for browser profilers (a larger file)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./transport/browser/build -o DIR [-debug]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := browser.Build(ctx, *out, browser.Options{Debug: *debug, Stderr: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(rep)
}
