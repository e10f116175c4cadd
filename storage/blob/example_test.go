package blob_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/audiopost/audiopost/storage/blob"
)

func ExampleOpenDir() {
	dir, _ := os.MkdirTemp("", "blobs")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	blobs, err := blob.OpenDir(dir)
	if err != nil {
		panic(err)
	}
	defer blobs.Close()

	w, _ := blobs.Create(ctx, "productions/42/output.txt")
	io.WriteString(w, "hello")
	if err := w.Close(); err != nil { // the blob appears only now
		panic(err)
	}
	r, info, _ := blobs.Open(ctx, "productions/42/output.txt")
	defer r.Close()
	b, _ := io.ReadAll(r)
	fmt.Println(info.Key, info.Size, string(b))
	// Output: productions/42/output.txt 5 hello
}
