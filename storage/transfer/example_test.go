package transfer_test

import (
	"context"
	"fmt"
	"log"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// List the files of a user's SFTP account, as GET service/{uuid}/ls.json
// does. (Not run: it needs a server.)
func ExampleOpen() {
	svc := storage.Service{Type: "sftp", Config: []byte(`{"host": "files.example.org", "username": "ann",
		"password": "...", "path": "/podcast", "host_key": "SHA256:..."}`)}
	c, err := transfer.Open(context.Background(), svc, transfer.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	files, err := c.List(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		fmt.Println(f.Name, f.Size)
	}
}
