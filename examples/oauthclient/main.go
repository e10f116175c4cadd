// Command oauthclient is a minimal API client: it logs in with the OAuth
// 2.0 password grant (golang.org/x/oauth2) and runs one production from
// start to finish: create, upload the input, start, poll the status,
// download the outputs.
//
//	go run ./examples/oauthclient -base http://127.0.0.1:8080 \
//	    -client-id ID -client-secret SECRET -user alice -password PW \
//	    -out ./results interview.wav
//
// Register the client with `audiopost client add` first.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// client is an authorized API client.
type client struct {
	base string
	hc   *http.Client
}

// call sends a request and decodes the envelope's data into v.
func (c *client) call(ctx context.Context, method, p, contentType string, body io.Reader, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+p, body)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var env struct {
		ErrorCode    *string         `json:"error_code"`
		ErrorMessage string          `json:"error_message"`
		Data         json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
		return fmt.Errorf("%s %s: HTTP %d: %w", method, p, res.StatusCode, err)
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, p, res.StatusCode, env.ErrorMessage)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(env.Data, v)
}

type production struct {
	UUID         string `json:"uuid"`
	Status       int    `json:"status"`
	StatusString string `json:"status_string"`
	ErrorMessage string `json:"error_message"`
	OutputFiles  []struct {
		Filename    string `json:"filename"`
		DownloadURL string `json:"download_url"`
	} `json:"output_files"`
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("oauthclient", flag.ContinueOnError)
	base := fs.String("base", "http://127.0.0.1:8080", "base URL of the service")
	clientID := fs.String("client-id", "", "OAuth client id")
	clientSecret := fs.String("client-secret", "", "OAuth client secret")
	user := fs.String("user", "", "username")
	password := fs.String("password", "", "password")
	out := fs.String("out", ".", "folder for the results")
	format := fs.String("format", "mp3", "output format")
	poll := fs.Duration("poll", time.Second, "status polling interval")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: oauthclient [flags] INPUT")
	}
	input := fs.Arg(0)
	b := strings.TrimSuffix(*base, "/")

	conf := &oauth2.Config{ClientID: *clientID, ClientSecret: *clientSecret,
		Endpoint: oauth2.Endpoint{TokenURL: b + "/oauth2/token/"}}
	tok, err := conf.PasswordCredentialsToken(ctx, *user, *password)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	c := &client{base: b, hc: conf.Client(ctx, tok)}

	var p production
	req := fmt.Sprintf(`{"metadata": {"title": %q}, "output_files": [{"format": %q}]}`, filepath.Base(input), *format)
	if err := c.call(ctx, "POST", "/api/productions.json", "application/json", strings.NewReader(req), &p); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "created", p.UUID)

	data, err := os.ReadFile(input)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("input_file", filepath.Base(input))
	fw.Write(data)
	mw.Close()
	if err := c.call(ctx, "POST", "/api/production/"+p.UUID+"/upload.json", mw.FormDataContentType(), &body, nil); err != nil {
		return err
	}
	if err := c.call(ctx, "POST", "/api/production/"+p.UUID+"/start.json", "", nil, nil); err != nil {
		return err
	}
	last := ""
	for p.Status != 3 {
		if err := c.call(ctx, "GET", "/api/production/"+p.UUID+"/status.json", "", nil, &p); err != nil {
			return err
		}
		if p.StatusString != last {
			fmt.Fprintln(stdout, "status:", p.StatusString)
			last = p.StatusString
		}
		if p.Status == 2 {
			c.call(ctx, "GET", "/api/production/"+p.UUID+".json", "", nil, &p)
			return fmt.Errorf("production failed: %s", p.ErrorMessage)
		}
		if p.Status != 3 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(*poll):
			}
		}
	}
	if err := c.call(ctx, "GET", "/api/production/"+p.UUID+".json", "", nil, &p); err != nil {
		return err
	}
	for _, o := range p.OutputFiles {
		if err := download(ctx, c.hc, o.DownloadURL, filepath.Join(*out, path.Base(o.Filename))); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "downloaded", o.Filename)
	}
	return nil
}

func download(ctx context.Context, hc *http.Client, url, dst string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("download %s: HTTP %d", url, res.StatusCode)
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
