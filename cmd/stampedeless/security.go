package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/loader"
)

// securityFlags are the serve flags that decide who may reach the server
// and where its loaders may connect.
func securityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "protected-mode", Value: "yes", EnvVars: env("protected-mode"),
			Usage: "yes: while no password is set (--requirepass), refuse clients not from loopback or the unix socket with Redis's -DENIED reply; no: serve everyone who can connect"},
		&cli.StringFlag{Name: "unixsocket", EnvVars: env("unixsocket"),
			Usage: "also serve the Redis protocol on this unix socket path (empty: no socket)"},
		&cli.StringFlag{Name: "unixsocketperm", EnvVars: env("unixsocketperm"),
			Usage: "permissions of the unix socket, in octal (700); empty: as the umask leaves them"},
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

// listenConfig is where the server accepts clients.
type listenConfig struct {
	// addr is --addr, plain TCP; empty: none.
	addr string
	// unixSocket is --unixsocket; empty: none. unixPerm is
	// --unixsocketperm; 0 leaves the umask's.
	unixSocket string
	unixPerm   fs.FileMode
}

// parseListen reads --addr, --unixsocket and --unixsocketperm.
func parseListen(c *cli.Context) (listenConfig, error) {
	l := listenConfig{addr: c.String("addr"), unixSocket: c.String("unixsocket")}
	if v := c.String("unixsocketperm"); v != "" {
		perm, err := strconv.ParseUint(v, 8, 32)
		if err != nil || perm > 0o777 {
			return l, fmt.Errorf("--unixsocketperm: want octal permissions such as 700, got %q", v)
		}
		l.unixPerm = fs.FileMode(perm)
	}
	if l.addr == "" && l.unixSocket == "" {
		return l, errors.New("nothing to serve on: --addr and --unixsocket are both empty")
	}
	return l, nil
}

// parseProtectedMode reads --protected-mode.
func parseProtectedMode(c *cli.Context) (bool, error) {
	switch v := c.String("protected-mode"); v {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	default:
		return false, fmt.Errorf("--protected-mode: want yes or no, got %q", v)
	}
}

// protectedModeState says in the startup log whether protected mode refuses
// anyone: it does only with no password.
func protectedModeState(on bool, password string) string {
	switch {
	case !on:
		return "no: every client that can connect is served"
	case password != "":
		return "yes, inactive: a password is set"
	}
	return "yes: no password, so clients not from loopback or the unix socket are refused"
}

// listen opens every listener of l. On an error, those already open are
// closed.
func (l listenConfig) listen() ([]net.Listener, error) {
	var lns []net.Listener
	fail := func(err error) ([]net.Listener, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, err
	}
	if l.addr != "" {
		ln, err := net.Listen("tcp", l.addr)
		if err != nil {
			return fail(err)
		}
		lns = append(lns, ln)
	}
	if l.unixSocket != "" {
		ln, err := listenUnix(l.unixSocket, l.unixPerm)
		if err != nil {
			return fail(err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// listenUnix listens on a unix socket at path, replacing a socket left
// there by a server that did not stop cleanly (as redis-server does), and
// sets its permissions.
func listenUnix(path string, perm fs.FileMode) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if perm != 0 {
		if err := os.Chmod(path, perm); err != nil {
			ln.Close()
			return nil, fmt.Errorf("--unixsocketperm: %w", err)
		}
	}
	return ln, nil
}
