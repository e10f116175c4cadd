package outbound_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/audiopost/audiopost/transport/outbound"
)

func ExampleClient_Fetch() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		fmt.Fprint(w, "ID3...")
	}))
	defer srv.Close()

	// The default policy refuses the loopback test server...
	strict := outbound.New(outbound.Config{})
	_, _, _, err := strict.Fetch(context.Background(), srv.URL+"/show/episode-1.mp3", &bytes.Buffer{})
	fmt.Println(errors.Is(err, outbound.ErrForbiddenAddress))

	// ...which an operator (here: a test) may allow.
	c := outbound.New(outbound.Config{AllowLoopback: true, MaxBytes: 1 << 20})
	var buf bytes.Buffer
	n, ctype, name, err := c.Fetch(context.Background(), srv.URL+"/show/episode-1.mp3", &buf)
	fmt.Println(n, ctype, name, err)
	// Output:
	// true
	// 6 audio/mpeg episode-1.mp3 <nil>
}
