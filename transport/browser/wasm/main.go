//go:build js && wasm

// Command wasm is the WebAssembly side of the in-browser pages: built
// with GOOS=js GOARCH=wasm (by go run ./transport/browser/build) and run
// in a Web Worker by the pages' worker.js, it sets the global
// audiopost.process and audiopost.measure, which run package local over a
// File the worker reads in slices.
//
// Both take the File, and a host object through which Go reaches the
// browser; bytes cross through its buffer:
//
//	buffer                            a Uint8Array of a megabyte, the bytes in transit
//	read(offset, length) Promise      puts up to length bytes of the File into buffer, resolves to how many
//	create(name) file                 an output file kept as Blob parts:
//	    write(offset, length)         takes length bytes from buffer
//	    read(offset, length) Promise  as host.read, over what was written
//	    close(), abort()
//	progress(object)                  where the work has got to
//
// process(file, settingsJSON, host) and measure(file, host) return
// Promises; a rejection carries message and, for bad settings,
// form_errors (field path to message, as the API's envelope has them).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall/js"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/transport/browser/local"
)

func main() {
	api := js.Global().Get("Object").New()
	api.Set("process", js.FuncOf(process))
	api.Set("measure", js.FuncOf(measure))
	js.Global().Set("audiopost", api)
	if ready := js.Global().Get("audiopostReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {}
}

// promise runs work on a goroutine of its own (a js.Func must return
// before the browser can answer the reads work makes) and settles a
// Promise with its result.
func promise(work func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		executor.Release()
		go func() {
			v, err := work()
			if err != nil {
				reject.Invoke(errorValue(err))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	return js.Global().Get("Promise").New(executor)
}

// errorValue is err as {message, form_errors}.
func errorValue(err error) js.Value {
	e := js.Global().Get("Object").New()
	e.Set("message", err.Error())
	var fe production.FieldErrors
	if errors.As(err, &fe) {
		m := js.Global().Get("Object").New()
		for k, v := range fe {
			m.Set(k, v)
		}
		e.Set("form_errors", m)
	}
	return e
}

// input is the File as local reads it.
func input(file, host js.Value) local.Input {
	return local.Input{Name: file.Get("name").String(), Size: int64(file.Get("size").Float()), Data: blobReader{host}}
}

// Bytes cross between Go and JavaScript through the host's one buffer
// (host.buffer, a Uint8Array of chunk bytes, which reads move to a new
// object over the same memory): a JavaScript value Go holds lives until
// Go's garbage collector releases it, which with Go's small heap comes
// rarely, and a fresh array for every slice kept them all: measuring two
// hours of WAV held 1.5 GB in the tab.
//
// One goroutine at a time uses the buffer (bufferMu): while a read is in
// flight the stream owns the buffer's memory (the JavaScript object is
// detached), and the engine's goroutines run meanwhile: the encoder's,
// writing its output, found the buffer detached, and copying into it
// threw in JavaScript, out of the Go call, which left the engine waiting
// for ever (two minutes of WAV to FLAC stopped at 45 % of the render).
var bufferMu sync.Mutex

// await blocks until the Promise p settles and returns its value. The
// goroutine waits; Go hands the thread back to the browser meanwhile.
func await(p js.Value) (js.Value, error) {
	type settled struct {
		v   js.Value
		err error
	}
	ch := make(chan settled, 1)
	ok := js.FuncOf(func(_ js.Value, args []js.Value) any { ch <- settled{v: args[0]}; return nil })
	bad := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{err: fmt.Errorf("reading: %s", args[0].Call("toString").String())}
		return nil
	})
	defer ok.Release()
	defer bad.Release()
	p.Call("then", ok, bad)
	s := <-ch
	return s.v, s.err
}

// readShared reads up to len(p) bytes (at most chunk) with read, a host
// call that resolves to how many it put into the host's buffer, and
// copies them into p.
func readShared(p []byte, host js.Value, read func(n int) js.Value) (int, error) {
	bufferMu.Lock()
	defer bufferMu.Unlock()
	v, err := await(read(min(len(p), chunk)))
	if err != nil {
		return 0, err
	}
	n := min(v.Int(), len(p))
	return js.CopyBytesToGo(p[:n], host.Get("buffer")), nil
}

// blobReader reads the File through the host's read.
type blobReader struct{ host js.Value }

func (b blobReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		at := float64(off) + float64(n)
		k, err := readShared(p[n:], b.host, func(k int) js.Value { return b.host.Call("read", at, k) })
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.EOF
		}
		n += k
	}
	return n, nil
}

func process(_ js.Value, args []js.Value) any {
	file, settings, host := args[0], args[1].String(), args[2]
	return promise(func() (any, error) {
		res, err := local.Process(context.Background(), input(file, host), []byte(settings), outputs{host}, func(p local.Progress) {
			o := js.Global().Get("Object").New()
			o.Set("status", int(p.Status))
			o.Set("status_string", p.Status.String())
			o.Set("fraction", p.Fraction)
			o.Set("pass", p.Pass)
			o.Set("read", p.Read)
			host.Call("progress", o)
		})
		if err != nil {
			return nil, err
		}
		prod, err := json.Marshal(res.Production)
		if err != nil {
			return nil, err
		}
		legend, err := json.Marshal(res.Chart)
		if err != nil {
			return nil, err
		}
		out := js.Global().Get("Object").New()
		out.Set("production", string(prod))
		out.Set("legend", string(legend))
		files := js.Global().Get("Array").New()
		for _, f := range res.Files {
			o := js.Global().Get("Object").New()
			o.Set("name", f.Name)
			o.Set("output", f.Output)
			o.Set("size", float64(f.Size))
			o.Set("md5", f.MD5)
			files.Call("push", o)
		}
		out.Set("files", files)
		out.Set("chart", bytesValue(res.LoudnessChart))
		out.Set("waveform", bytesValue(res.Waveform))
		return out, nil
	})
}

func measure(_ js.Value, args []js.Value) any {
	file, host := args[0], args[1]
	return promise(func() (any, error) {
		m, err := local.Measure(context.Background(), input(file, host), func(read float64) {
			o := js.Global().Get("Object").New()
			o.Set("read", read)
			host.Call("progress", o)
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file.Get("name").String(), err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	})
}

func bytesValue(b []byte) js.Value {
	u8 := js.Global().Get("Uint8Array").New(len(b))
	js.CopyBytesToJS(u8, b)
	return u8
}

// outputs creates the output files through the host.
type outputs struct{ host js.Value }

func (o outputs) Create(name string) (engine.PendingFile, error) {
	return newBlobFile(o.host.Call("create", name), o.host), nil
}

// chunk is the size of the host's buffer: how much a blobFile gathers
// before it hands the bytes to the browser as one Blob part, and how much
// is read at once.
const chunk = 1 << 20

// blobFile is an output file the browser keeps as Blob parts: written in
// chunks, patched where the encoders seek back to finish their headers,
// read back for the checksum (local.ChunkedFile over the host's file). It
// implements engine.PendingFile as a file that seeks and reads back, as
// the engine lets WAV and FLAC patch their headers.
type blobFile struct {
	*local.ChunkedFile
	f js.Value
}

func newBlobFile(f, host js.Value) *blobFile {
	return &blobFile{ChunkedFile: local.NewChunkedFile(blobRemote{f: f, host: host}, chunk), f: f}
}

func (b *blobFile) Close() error {
	err := b.Release()
	b.f.Call("close")
	return err
}

func (b *blobFile) Abort() error {
	b.Discard()
	b.f.Call("abort")
	return nil
}

// blobRemote is the host's file as a local.Remote: bytes cross through
// the host's buffer, a chunk at most per call.
type blobRemote struct{ f, host js.Value }

func (r blobRemote) WriteAt(p []byte, off int64) error {
	bufferMu.Lock()
	defer bufferMu.Unlock()
	if n := js.CopyBytesToJS(r.host.Get("buffer"), p); n != len(p) {
		panic("audiopost: the shared buffer has no room") // never: the buffer is a chunk, and ours
	}
	r.f.Call("write", float64(off), len(p))
	return nil
}

func (r blobRemote) ReadAt(p []byte, off int64) (int, error) {
	return readShared(p, r.host, func(k int) js.Value { return r.f.Call("read", float64(off), k) })
}
