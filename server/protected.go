package server

import (
	"errors"
	"net"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/netloop"
)

// protectedModeAdaptations are the phrases of Redis's protected-mode reply
// that name Redis's own configuration, each with what stampedeless says in
// its place: there is no configuration file for CONFIG REWRITE to write, and the
// password is --requirepass. Everything else is Redis's text, word for word.
var protectedModeAdaptations = []string{
	"Use CONFIG REWRITE to make this change permanent.",
	"Use --protected-mode no (STAMPEDELESS_PROTECTED_MODE=no) to make this change permanent.",
	"by editing the Redis configuration file, and setting the protected mode option to 'no'",
	"by setting the environment variable STAMPEDELESS_PROTECTED_MODE to 'no'",
	"Set up an authentication password for the default user.",
	"Set up an authentication password for the default user (--requirepass).",
}

// deniedProtectedMode is what a client refused by protected mode reads
// before the connection is closed: Redis 7's reply, with
// protectedModeAdaptations applied.
var deniedProtectedMode = strings.NewReplacer(protectedModeAdaptations...).Replace(
	"-DENIED Redis is running in protected mode because protected " +
		"mode is enabled and no password is set for the default user. " +
		"In this mode connections are only accepted from the loopback interface. " +
		"If you want to connect from external computers to Redis you " +
		"may adopt one of the following solutions: " +
		"1) Just disable protected mode sending the command " +
		"'CONFIG SET protected-mode no' from the loopback interface " +
		"by connecting to Redis from the same host the server is " +
		"running, however MAKE SURE Redis is not publicly accessible " +
		"from internet if you do so. Use CONFIG REWRITE to make this " +
		"change permanent. " +
		"2) Alternatively you can just disable the protected mode by " +
		"editing the Redis configuration file, and setting the protected " +
		"mode option to 'no', and then restarting the server. " +
		"3) If you started the server manually just for testing, restart " +
		"it with the '--protected-mode no' option. " +
		"4) Set up an authentication password for the default user. " +
		"NOTE: You only need to do one of the above things in order for " +
		"the server to start accepting connections from the outside.\r\n")

// isLocal reports whether a client address is local as Redis 7.2 counts
// it: 127.0.0.0/8, ::1, or a unix socket.
func isLocal(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr, unixPeer:
		return true
	}
	return false
}

// protectedRefuses reports whether protected mode refuses a client from
// remote now: it is on, the default user needs no password (as Redis
// checks), and the client is not local.
func (s *Server) protectedRefuses(remote net.Addr) bool {
	return s.protectedMode.Load() && s.acl.users.Default().Perms().NoPass() && !isLocal(remote)
}

// refuse sends a connection that will not be served its one error reply,
// and closes it as closeGracefully does, so that the commands the client
// sent meanwhile do not make the kernel reset the connection under the
// reply. The write is bounded: the client need not read.
func refuse(nc net.Conn, reply string) {
	nc.SetDeadline(time.Now().Add(time.Second)) // a TLS handshake reads too
	if _, err := nc.Write([]byte(reply)); err != nil {
		nc.Close()
		return
	}
	netloop.LingerClose(nc)
}

// unixPeer is how Redis shows both ends of a unix socket connection in
// CLIENT LIST: addr=/unixsocket:0.
type unixPeer struct{}

func (unixPeer) Network() string { return "unix" }
func (unixPeer) String() string  { return "/unixsocket:0" }

// peerAddrs returns the remote and local addresses CLIENT LIST shows.
func peerAddrs(nc net.Conn) (remote, local net.Addr) {
	if _, ok := nc.LocalAddr().(*net.UnixAddr); ok {
		return unixPeer{}, unixPeer{}
	}
	return nc.RemoteAddr(), nc.LocalAddr()
}

// configBool parses a yes/no parameter as Redis's configuration does.
func configBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, errors.New("argument must be 'yes' or 'no'")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
