package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/internal/tlsfiles"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/server"
)

// securityFlags are the serve flags that decide who may reach the server
// and where its loaders may connect.
func securityFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "protected-mode", Value: "yes", EnvVars: env("protected-mode"),
			Usage: "yes: while no password is set (--requirepass), refuse clients not from loopback or the unix socket with Redis's -DENIED reply; no: serve everyone who can connect"},
		&cli.StringFlag{Name: "tls-port", EnvVars: env("tls-port"),
			Usage: "also serve the Redis protocol over TLS on this port, on the host of --addr (127.0.0.1 if --addr is empty), or on host:port (empty or 0: no TLS)"},
		&cli.StringFlag{Name: "tls-cert-file", EnvVars: env("tls-cert-file"),
			Usage: "PEM certificate (chain) of the TLS port; also the client certificate for a rediss:// --redis. Reloaded on SIGHUP"},
		&cli.StringFlag{Name: "tls-key-file", EnvVars: env("tls-key-file"),
			Usage: "PEM private key of --tls-cert-file. Reloaded on SIGHUP"},
		&cli.StringFlag{Name: "tls-ca-cert-file", EnvVars: env("tls-ca-cert-file"),
			Usage: "PEM CA certificates that verify client certificates, and a rediss:// --redis's certificate instead of the system's roots. Reloaded on SIGHUP for clients"},
		&cli.StringFlag{Name: "tls-auth-clients", Value: tlsfiles.AuthClientsYes, EnvVars: env("tls-auth-clients"),
			Usage: "yes: TLS clients must present a certificate signed by --tls-ca-cert-file; optional: verified if presented; no: not asked for"},
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
	// tlsAddr is --tls-port as host:port; empty: none. tls is its
	// configuration, also used for a rediss:// --redis; nil without any
	// --tls-* file.
	tlsAddr string
	tls     *tlsfiles.Config
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
	if v := c.String("tls-port"); v != "" && v != "0" {
		l.tlsAddr = v
		if !strings.Contains(v, ":") {
			host := "127.0.0.1"
			if h, _, err := net.SplitHostPort(l.addr); err == nil {
				host = h
			}
			l.tlsAddr = net.JoinHostPort(host, v)
		}
	}
	files := tlsfiles.Files{CertFile: c.String("tls-cert-file"), KeyFile: c.String("tls-key-file"),
		CAFile: c.String("tls-ca-cert-file"), AuthClients: c.String("tls-auth-clients")}
	switch {
	case l.tlsAddr != "" && files.CertFile == "":
		return l, errors.New("--tls-port needs --tls-cert-file and --tls-key-file")
	case l.tlsAddr != "" || files.CertFile != "" || files.CAFile != "":
		var err error
		if l.tls, err = tlsfiles.Load(files); err != nil {
			return l, err
		}
	}
	if l.addr == "" && l.unixSocket == "" && l.tlsAddr == "" {
		return l, errors.New("nothing to serve on: --addr, --unixsocket and --tls-port are all empty")
	}
	return l, nil
}

// listener is one listener of the server, TLS when tls is set.
type listener struct {
	net.Listener
	tls *tls.Config
}

// serve serves srv on l until it is shut down.
func (l listener) serve(srv *server.Server) error {
	if l.tls != nil {
		return srv.ServeTLS(l.Listener, l.tls)
	}
	return srv.Serve(l.Listener)
}

// listenerNames names the listeners, for the log and the status page.
func listenerNames(lns []listener) string {
	names := make([]string, len(lns))
	for i, ln := range lns {
		names[i] = ln.String()
	}
	return strings.Join(names, ",")
}

// String is the address in the startup log; TLS listeners are tls://.
func (l listener) String() string {
	if l.tls != nil {
		return "tls://" + l.Addr().String()
	}
	return l.Addr().String()
}

// reloadOnSIGHUP reads the TLS files again at each SIGHUP until ctx ends.
// Without TLS files, SIGHUP is ignored, as redis-server ignores it.
func reloadOnSIGHUP(ctx context.Context, log *slog.Logger, files *tlsfiles.Config) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP) // before the server is ready, so a SIGHUP never kills it
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			if files == nil {
				log.Info("SIGHUP: no TLS files to reload")
				continue
			}
			if err := files.Reload(); err != nil {
				log.Error("SIGHUP: TLS files not reloaded; the ones loaded before stay in use", "err", err)
				continue
			}
			log.Info("SIGHUP: TLS files reloaded; new connections use them")
		}
	}()
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
func (l listenConfig) listen() ([]listener, error) {
	var lns []listener
	fail := func(err error) ([]listener, error) {
		for _, ln := range lns {
			ln.Close()
		}
		return nil, err
	}
	for _, want := range []struct {
		addr string
		open func() (net.Listener, error)
		tls  *tls.Config
	}{
		{l.addr, func() (net.Listener, error) { return listenFlag("addr", l.addr) }, nil},
		{l.tlsAddr, func() (net.Listener, error) { return listenFlag("tls-port", l.tlsAddr) }, l.serverTLS()},
		{l.unixSocket, func() (net.Listener, error) { return listenUnix(l.unixSocket, l.unixPerm) }, nil},
	} {
		if want.addr == "" {
			continue
		}
		ln, err := want.open()
		if err != nil {
			return fail(err)
		}
		lns = append(lns, listener{ln, want.tls})
	}
	return lns, nil
}

// serverTLS is the TLS listener's configuration, nil without TLS files.
func (l listenConfig) serverTLS() *tls.Config {
	if l.tls == nil {
		return nil
	}
	return l.tls.Server()
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
