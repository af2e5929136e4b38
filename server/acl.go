package server

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/pubsub"
)

// aclState is the server's ACL: its users, the log of denials, and what
// closing the connections of a deleted user needs.
type aclState struct {
	users *acl.Registry
	log   acl.Log
	// file is the ACL file of ACL LOAD and SAVE (Options.ACLFile), if any.
	file string
	// base are the denials counted when CONFIG RESETSTAT last ran, by
	// reason: INFO reports those since, while Prometheus counts them all.
	base [acl.NumReasons]atomic.Int64
}

// ErrUsersAndACLFile is returned by New for Options with both Users and
// ACLFile, which Redis refuses too: one place defines the users.
var ErrUsersAndACLFile = errors.New("server: users are defined by Options.Users or by Options.ACLFile, not both")

// errRevoked ends a connection whose user was deleted, or whose channels
// were taken away while it was subscribed.
var errRevoked = errors.New("server: the connection's user was revoked")

// initACL builds the ACL command table from the command table (and the
// Redis commands it lacks) and the users from opts: the default user with opts.RequirePass, then opts.Users
// or opts.ACLFile.
func (s *Server) initACL(opts Options) error {
	var cmds []*acl.Command
	for _, cmd := range s.table {
		ac := &acl.Command{Name: cmd.Name, Categories: cmd.categories()}
		for _, sub := range cmd.subcommands {
			sub.aclCommand = &acl.Command{Name: sub.Name, Categories: sub.categories()}
			ac.Subcommands = append(ac.Subcommands, sub.aclCommand)
		}
		cmd.aclCommand = ac
		cmds = append(cmds, ac)
	}
	// Rules may name Redis's commands this server lacks, as on redis-server.
	s.acl.users = acl.NewRegistry(acl.NewTable(acl.WithRedisCommands(cmds)))
	s.acl.file = opts.ACLFile
	s.acl.users.SetDefaultPassword(opts.RequirePass)
	switch {
	case len(opts.Users) > 0 && opts.ACLFile != "":
		return ErrUsersAndACLFile
	case len(opts.Users) > 0:
		if err := s.acl.users.Configure(opts.Users); err != nil {
			return fmt.Errorf("server: users: %w", err)
		}
	case opts.ACLFile != "":
		if _, err := s.acl.users.LoadFile(opts.ACLFile); err != nil {
			return fmt.Errorf("server: ACL file: %w", err)
		}
	}
	for _, r := range acl.Reasons {
		s.metrics.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace:   "stampedeless",
			Name:        "acl_denied_total",
			Help:        "Commands and authentications the ACL denied, by reason: command, key, channel, auth (INFO's acl_access_denied_*).",
			ConstLabels: prometheus.Labels{"reason": r.String()},
		}, func() float64 { return float64(s.acl.log.Denied(r)) }))
	}
	return nil
}

// groupCategories are the categories a command has for being in a group, as
// Redis's command tables give them.
var groupCategories = map[string]acl.Category{
	"string":       acl.String,
	"bitmap":       acl.Bitmap,
	"hash":         acl.Hash,
	"generic":      acl.Keyspace,
	"connection":   acl.Connection,
	"transactions": acl.Transaction,
	"scripting":    acl.Scripting,
	"set":          acl.Set,
	"sorted-set":   acl.SortedSet,
	"hyperloglog":  acl.HyperLogLog,
	"list":         acl.List,
	"geo":          acl.Geo,
	"stream":       acl.Stream,
}

// categories are cmd's ACL categories, derived as Redis derives them: from
// the flags (write: @write, readonly: @read, admin: @admin and @dangerous,
// pubsub: @pubsub, fast: @fast, else @slow, blocking: @blocking; readonly scripting commands
// are not @read), from the group, and the extra
// ones in cmd.acl. A container (CLIENT) is, as in Redis, @slow and its
// extra ones alone: its subcommands have the rest.
func (cmd *command) categories() acl.Category {
	if len(cmd.subcommands) > 0 {
		return cmd.ACL | acl.Slow
	}
	cats := cmd.ACL
	if !cmd.ACLNoGroup {
		cats |= groupCategories[cmd.Group]
	}
	for _, f := range []struct {
		flag commands.Flags
		cats acl.Category
	}{
		{commands.Write, acl.Write}, {commands.Readonly, acl.Read}, {commands.Admin, acl.Admin | acl.Dangerous},
		{commands.PubSub, acl.PubSub}, {commands.Fast, acl.Fast}, {commands.Blocking, acl.Blocking},
	} {
		if cmd.Flags&f.flag != 0 {
			cats |= f.cats
		}
	}
	if cmd.Group == "scripting" {
		cats &^= acl.Read // EVAL_RO is no @read command, in Redis either
	}
	if cats&acl.Fast == 0 {
		cats |= acl.Slow
	}
	return cats
}

// keyUse says whether a call of cmd reads and whether it writes its i-th
// key.
func (cmd *command) keyUse(args [][]byte, i int) (read, write bool) {
	a := cmd.Access
	if cmd.VarAccess != nil {
		a = cmd.VarAccess(args)
	}
	switch a {
	case commands.KeysDestFirst:
		return i > 0, i == 0
	case commands.KeysCopy:
		return i == 0, i > 0
	case commands.KeysRename:
		return i == 0, true
	case commands.KeysMerge:
		return true, i == 0
	case commands.KeysRead:
		return true, false
	case commands.KeysWrite:
		return false, true
	case commands.KeysNone:
		return false, false
	case commands.KeysFromFlags:
		if cmd.Flags&commands.Readonly != 0 {
			return true, false
		}
	}
	return true, true
}

// ACL LOG's contexts of a command run on its own, and of one queued in
// MULTI or run by EXEC.
const (
	aclContextTopLevel = "toplevel"
	aclContextMulti    = "multi"
)

// aclCall describes a call of cmd with args as the ACL checks it: the
// command, its first argument, the keys and channels it names.
func aclCall(cmd *command, args [][]byte) *acl.Call {
	call := &acl.Call{Cmd: cmd.aclCommand, NoAuth: cmd.Flags&commands.NoAuth != 0}
	if len(args) > 1 {
		call.FirstArg = args[1]
	}
	// Shard channels are keys to COMMAND INFO, but channels to the ACL
	// (hasKeys).
	if cmd.hasKeys() {
		keys := cmd.keys(args)
		call.Keys = make([]acl.KeyUse, len(keys))
		for i, k := range keys {
			read, write := cmd.keyUse(args, i)
			call.Keys[i] = acl.KeyUse{Key: k, Read: read, Write: write}
		}
	}
	if cmd.KeyPrefix > 0 && cmd.KeyPrefix < len(args) {
		call.Prefix = args[cmd.KeyPrefix]
	}
	if cmd.Channels != commands.ChannelsNone {
		channels := args[1:]
		if cmd.Channels == commands.ChannelsPublish {
			channels = args[1:2]
		}
		call.Channels = make([]acl.ChannelUse, len(channels))
		for i, ch := range channels {
			call.Channels[i] = acl.ChannelUse{Channel: ch, Pattern: cmd.Channels == commands.ChannelsPatterns}
		}
	}
	return call
}

// calledCommand is the command args call, by its name in any case: a
// container's subcommand when there is an argument; nil when either is
// unknown.
func (s *Server) calledCommand(args [][]byte) *command {
	cmd := s.table[string(resp.Lower(args[0]))]
	if cmd != nil && len(cmd.subcommands) > 0 && len(args) > 1 {
		cmd = cmd.subcommand(args[1])
	}
	return cmd
}

// checkPerms reports whether perms allow cmd with args: one of the user's
// selectors allows the command (unless it needs no authentication), each
// key and each channel. If not, it returns the reason and the key or
// channel denied (the command's name for a command denied).
func checkPerms(p *acl.Perms, cmd *command, args [][]byte) (reason acl.Reason, object []byte, ok bool) {
	return p.Check(aclCall(cmd, args))
}

// permitted reports whether c's user may run cmd with args. If not, it
// refuses the command with NOPERM, in Redis 7.0's words (an EXEC with
// EXECABORT), and logs the denial.
func (c *Conn) permitted(cmd *command, args [][]byte) bool {
	reason, ok := c.checkAndLog(cmd, args)
	if ok {
		return true
	}
	switch reason {
	case acl.DeniedKey:
		c.refuse(cmd, "NOPERM this user has no permissions to access one of the keys used as arguments")
	case acl.DeniedChannel:
		c.refuse(cmd, "NOPERM this user has no permissions to access one of the channels used as arguments")
	default:
		c.refuse(cmd, "NOPERM this user has no permissions to run the '"+cmd.Name+"' command")
	}
	return false
}

// checkAndLog reports whether c's user may run cmd with args, and if not
// why, having logged the denial.
func (c *Conn) checkAndLog(cmd *command, args [][]byte) (acl.Reason, bool) {
	u := c.user.Load()
	p := u.Perms()
	if p.Unrestricted() {
		return 0, true
	}
	reason, object, ok := checkPerms(p, cmd, args)
	if !ok {
		c.logDenial(reason, string(object), u.Name())
	}
	return reason, ok
}

// logDenial adds a denial of a command c ran, or queued in MULTI, to the
// ACL log.
func (c *Conn) logDenial(reason acl.Reason, object, username string) {
	context := aclContextTopLevel
	if c.tx.active {
		context = aclContextMulti
	}
	c.logDenialIn(context, reason, object, username)
}

// permittedInExec reports whether c's user may still run a command EXEC
// is about to run: its rules may have changed since the command was
// queued. If not, it replies NOPERM in Redis 7.0's words and logs the
// denial, as Redis's EXEC does, and the transaction goes on.
func (c *Conn) permittedInExec(cmd *command, args [][]byte) bool {
	reason, ok := c.checkAndLog(cmd, args)
	if ok {
		return true
	}
	why := "no permission to execute the command or subcommand"
	switch reason {
	case acl.DeniedKey:
		why = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		why = "no permission to access one of the channels used as arguments"
	}
	c.w.Error("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
		"This command is no longer allowed for the following reason: " + why)
	return false
}

// logDenialIn adds a denial to the ACL log, with the context it happened
// in ("lua": a script c ran) and c's CLIENT INFO, as Redis logs the
// client that ran the script.
func (c *Conn) logDenialIn(context string, reason acl.Reason, object, username string) {
	c.srv.acl.log.Add(acl.Entry{Reason: reason, Context: context, Object: object,
		Username: username, Updated: time.Now(), ClientInfo: c.info(nil, nil)})
}

// revoke closes the connections for which match is true, as Redis closes
// those of a deleted user. self, if among them, closes after its reply.
// The others are marked, so they run no further command, and their loops,
// woken, close them (parked ones once their command has answered).
func (s *Server) revoke(self *Conn, match func(*Conn) bool) {
	var marked []*Conn
	for _, c := range s.clients() {
		switch {
		case !match(c):
		case c == self:
			c.revoked.Store(true)
			c.quit = true
		default:
			c.revoked.Store(true)
			marked = append(marked, c)
		}
	}
	if len(marked) == 0 {
		return
	}
	for _, c := range marked {
		c.wake()
	}
}

// revokeUsers closes the connections authenticated as any of users.
func (s *Server) revokeUsers(self *Conn, users []*acl.User) {
	if len(users) == 0 {
		return
	}
	gone := make(map[*acl.User]bool, len(users))
	for _, u := range users {
		gone[u] = true
	}
	s.revoke(self, func(c *Conn) bool { return gone[c.user.Load()] })
}

// revokeSubscribers closes the connections of u subscribed to a channel or
// pattern u may no longer name, as Redis does when a user's channels change.
func (s *Server) revokeSubscribers(self *Conn, u *acl.User) {
	p := u.Perms()
	if p.AllChannels() {
		return
	}
	s.revoke(self, func(c *Conn) bool {
		if c.user.Load() != u || c.subs.Total() == 0 {
			return false
		}
		s.pubsub.RLock()
		defer s.pubsub.RUnlock()
		for kind, name := range c.subs.All() {
			if !p.CanAccessChannel([]byte(name), kind == pubsub.Pattern) {
				return true
			}
		}
		return false
	})
}

// mayStillSubscribe checks, with the pub/sub lock held, that c's user may
// still name the channels it is about to subscribe to: ACL SETUSER may have
// taken them away since dispatch checked, and revokeSubscribers, which
// takes the lock after changing the user, would not see this subscription.
// If not, c is closed, as revokeSubscribers would have closed it.
func (c *Conn) mayStillSubscribe(kind pubsub.Kind, names [][]byte) bool {
	p := c.user.Load().Perms()
	if p.AllChannels() {
		return true
	}
	for _, name := range names {
		if !p.CanAccessChannel(name, kind == pubsub.Pattern) {
			c.revoked.Store(true)
			c.quit = true
			return false
		}
	}
	return true
}

// infoACL writes INFO's ACL counters, Redis 7.2's, since CONFIG RESETSTAT.
func (s *Server) infoACL(b *infoBuilder) {
	for _, f := range []struct {
		name   string
		reason acl.Reason
	}{
		{"acl_access_denied_auth", acl.DeniedAuth}, {"acl_access_denied_cmd", acl.DeniedCommand},
		{"acl_access_denied_key", acl.DeniedKey}, {"acl_access_denied_channel", acl.DeniedChannel},
	} {
		b.field(f.name, s.acl.log.Denied(f.reason)-s.acl.base[f.reason].Load())
	}
}

// resetACLStats starts INFO's ACL counters again from zero.
func (s *Server) resetACLStats() {
	for _, r := range acl.Reasons {
		s.acl.base[r].Store(s.acl.log.Denied(r))
	}
}
