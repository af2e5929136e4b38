// Command stampedeless runs the stampedeless cache server: a Redis-protocol
// cache that stops cache stampedes.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "stampedeless:", err)
		if isUsageError(err) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
