package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/loader"
)

// securityFlags are the serve flags that decide who may reach the server
// and where its loaders may connect.
func securityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "loader-allow", EnvVars: env("loader-allow"),
			Usage: "where loaders may connect: hosts, IP addresses and CIDR prefixes, each optionally with :port (repeatable); checked at LOADER.REGISTER, for each redirect and for each connection after resolving (default: loopback; the hosts of --loader flags are always allowed)"},
	}
}

// loaderAllowList is --loader-allow, or loopback without it, plus the host
// of every --loader flag.
func loaderAllowList(c *cli.Context, initial []loader.Config) (*loader.AllowList, error) {
	allow := loader.Loopback()
	if specs := c.StringSlice("loader-allow"); len(specs) > 0 {
		var err error
		if allow, err = loader.ParseAllowList(specs); err != nil {
			return nil, err
		}
	}
	for _, l := range initial {
		if err := allow.AllowURLHost(l.URL); err != nil {
			return nil, fmt.Errorf("--loader %s=%s: %w", l.Prefix, l.URL, err)
		}
	}
	return allow, nil
}
