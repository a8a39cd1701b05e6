// Minimal Go net/http client: `go run main.go URL USER_AGENT` (UA "" = Go default); default transport (HTTP/2 over TLS), TLS verification off; prints status.
package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: main URL USER_AGENT")
		os.Exit(2)
	}
	// Clone the default transport so ForceAttemptHTTP2 (h2 via ALPN) stays as Go ships it.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	client := &http.Client{Transport: tr}
	req, err := http.NewRequest("GET", os.Args[1], nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if os.Args[2] != "" {
		req.Header.Set("User-Agent", os.Args[2])
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	fmt.Fprintln(os.Stderr, "proto:", resp.Proto)
	fmt.Println(resp.StatusCode)
}
