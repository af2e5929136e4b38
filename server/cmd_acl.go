package server

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// The ACL subcommands, in Redis 7.0's words.

// subcommandSyntaxError is Redis's reply to a subcommand given the wrong
// arguments, naming the subcommand as sent.
func subcommandSyntaxError(c *Conn, args [][]byte) {
	c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(commands.Truncate(args[1], 128)) +
		"'. Try " + strings.ToUpper(string(args[0])) + " HELP.")
}

func cmdACLWhoAmI(c *Conn, _ [][]byte) { c.w.BulkString(c.user.Load().Name()) }

func cmdACLUsers(c *Conn, _ [][]byte) {
	users := c.srv.acl.users.Users()
	c.w.Array(len(users))
	for _, u := range users {
		c.w.BulkString(u.Name())
	}
}

// cmdACLList replies with each user as an ACL file line.
func cmdACLList(c *Conn, _ [][]byte) {
	reg := c.srv.acl.users
	users := reg.Users()
	c.w.Array(len(users))
	for _, u := range users {
		c.w.BulkString("user " + u.Name() + " " + reg.Rules(u))
	}
}

// cmdACLCat implements ACL CAT [category]: the categories, or the commands
// and subcommands in one.
func cmdACLCat(c *Conn, args [][]byte) {
	switch len(args) {
	case 2:
		names := acl.CategoryNames()
		c.w.Array(len(names))
		for _, n := range names {
			c.w.BulkString(n)
		}
	case 3:
		cat, ok := acl.ParseCategory(string(args[2]))
		if !ok {
			c.w.Error("ERR Unknown category '" + string(commands.Truncate(args[2], 128)) + "'")
			return
		}
		cmds := c.srv.acl.users.Table().InCategory(cat)
		c.w.Array(len(cmds))
		for _, cmd := range cmds {
			c.w.BulkString(cmd.Name)
		}
	default:
		subcommandSyntaxError(c, args)
	}
}

// cmdACLGetUser replies with a user's rules as a map, or null.
func cmdACLGetUser(c *Conn, args [][]byte) {
	reg := c.srv.acl.users
	u := reg.User(string(args[2]))
	if u == nil {
		c.w.Null()
		return
	}
	d := reg.Describe(u)
	c.w.Map(6)
	c.w.BulkString("flags")
	c.w.Set(len(d.Flags))
	for _, f := range d.Flags {
		c.w.BulkString(f)
	}
	c.w.BulkString("passwords")
	c.w.Array(len(d.Passwords))
	for _, p := range d.Passwords {
		c.w.BulkString(p)
	}
	writeSelector(c, d.SelectorDescription)
	c.w.BulkString("selectors")
	c.w.Array(len(d.Selectors))
	for _, s := range d.Selectors {
		c.w.Map(3)
		writeSelector(c, s)
	}
}

// writeSelector writes a selector's commands, keys and channels, as
// fields of a map.
func writeSelector(c *Conn, s acl.SelectorDescription) {
	for _, kv := range [][2]string{{"commands", s.Commands}, {"keys", s.Keys}, {"channels", s.Channels}} {
		c.w.BulkString(kv[0])
		c.w.BulkString(kv[1])
	}
}

// cmdACLSetUser implements ACL SETUSER name [rule ...]. The user's open
// connections follow the new rules from their next command; those
// subscribed to a channel the user may no longer name are closed.
func cmdACLSetUser(c *Conn, args [][]byte) {
	rules := make([]string, len(args)-3)
	for i, a := range args[3:] {
		rules[i] = string(a)
	}
	u, err := c.srv.acl.users.SetUser(string(args[2]), rules)
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	c.srv.revokeSubscribers(c, u)
	c.w.OK()
}

// cmdACLDelUser implements ACL DELUSER name [name ...]: the users' open
// connections are closed, this one after its reply.
func cmdACLDelUser(c *Conn, args [][]byte) {
	names := make([]string, len(args)-2)
	for i, a := range args[2:] {
		names[i] = string(a)
	}
	gone, err := c.srv.acl.users.DelUsers(names)
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	c.srv.revokeUsers(c, gone)
	c.w.Int(int64(len(gone)))
}

// cmdACLLog implements ACL LOG [count|RESET], newest entries first.
func cmdACLLog(c *Conn, args [][]byte) {
	log := &c.srv.acl.log
	count := int64(10)
	switch {
	case len(args) > 3:
		subcommandSyntaxError(c, args)
		return
	case len(args) == 3 && resp.EqualFold(args[2], "reset"):
		log.Reset()
		c.w.OK()
		return
	case len(args) == 3:
		n, ok := resp.ParseInt(args[2])
		if !ok {
			c.w.Error(commands.ErrNotInteger)
			return
		}
		count = n
	}
	entries := log.Entries(int(min(count, math.MaxInt32)))
	now := time.Now()
	c.w.Array(len(entries))
	for _, e := range entries {
		c.w.Map(7)
		c.w.BulkString("count")
		c.w.Int(e.Count)
		c.w.BulkString("reason")
		c.w.BulkString(e.Reason.String())
		c.w.BulkString("context")
		c.w.BulkString(e.Context)
		c.w.BulkString("object")
		c.w.BulkString(e.Object)
		c.w.BulkString("username")
		c.w.BulkString(e.Username)
		c.w.BulkString("age-seconds")
		c.w.Double(float64(now.Sub(e.Updated).Milliseconds()) / 1000)
		c.w.BulkString("client-info")
		c.w.BulkString(e.ClientInfo)
	}
}

// cmdACLDryRun implements ACL DRYRUN user command [arg ...]: whether the
// user could run the command, without running it.
func cmdACLDryRun(c *Conn, args [][]byte) {
	u := c.srv.acl.users.User(string(args[2]))
	if u == nil {
		c.w.Error("ERR User '" + string(args[2]) + "' not found")
		return
	}
	call := args[3:]
	cmd := c.srv.calledCommand(call)
	var check *acl.Call
	switch {
	case cmd != nil && !cmd.arityOK(len(call)):
		c.w.Error("ERR wrong number of arguments for '" + cmd.Name + "' command")
		return
	case cmd != nil:
		check = aclCall(cmd, call)
	default:
		// A Redis command this server does not serve is checked as Redis
		// would check it, arity aside.
		check = c.srv.unservedCall(call)
		if check == nil {
			c.w.Error("ERR Command '" + string(call[0]) + "' not found")
			return
		}
	}
	switch reason, object, ok := u.Perms().Check(check); {
	case ok:
		c.w.OK()
	case reason == acl.DeniedKey:
		c.w.BulkString("This user has no permissions to access the '" + string(object) + "' key")
	case reason == acl.DeniedChannel:
		c.w.BulkString("This user has no permissions to access the '" + string(object) + "' channel")
	default:
		c.w.BulkString("This user has no permissions to run the '" + check.Cmd.Name + "' command")
	}
}

// unservedCall is the call of a Redis command this server does not serve
// but ACL rules name (acl.WithRedisCommands), with its keys as Redis finds
// them (RESTORE-ASKING's key); nil for a name Redis does not know either.
func (s *Server) unservedCall(args [][]byte) *acl.Call {
	table := s.acl.users.Table()
	cmd := table.Lookup(string(args[0]))
	if cmd == nil {
		return nil
	}
	if len(cmd.Subcommands) > 0 && len(args) > 1 {
		if cmd = table.Lookup(string(args[0]) + "|" + string(args[1])); cmd == nil {
			return nil
		}
	}
	call := &acl.Call{Cmd: cmd}
	if len(args) > 1 {
		call.FirstArg = args[1]
	}
	if cmd.Name == "restore-asking" && len(args) > 1 {
		call.Keys = []acl.KeyUse{{Key: args[1], Write: true}}
	}
	return call
}

// genpassMaxBits bounds ACL GENPASS's argument, as Redis does.
const genpassMaxBits = 4096

// cmdACLGenPass implements ACL GENPASS [bits]: a random password of bits
// (256 by default), in hex.
func cmdACLGenPass(c *Conn, args [][]byte) {
	bits := int64(256)
	switch len(args) {
	case 2:
	case 3:
		n, ok := resp.ParseInt(args[2])
		if !ok {
			c.w.Error(commands.ErrNotInteger)
			return
		}
		bits = n
	default:
		subcommandSyntaxError(c, args)
		return
	}
	if bits <= 0 || bits > genpassMaxBits {
		c.w.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
		return
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	c.w.BulkString(hex.EncodeToString(buf)[:chars])
}

// errNoACLFile is ACL LOAD's and SAVE's reply without --aclfile.
const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via " +
	"the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in " +
	"order to store users in the Redis configuration."

// cmdACLLoad implements ACL LOAD: the users of the ACL file replace every
// user, or, if the file has an error, nothing changes. The connections of
// users other than the default one are closed, as in Redis.
func cmdACLLoad(c *Conn, _ [][]byte) {
	s := c.srv
	if s.acl.file == "" {
		c.w.Error(errNoACLFile)
		return
	}
	old, err := s.acl.users.LoadFile(s.acl.file)
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	s.revokeUsers(c, old)
	c.w.OK()
}

// cmdACLSave implements ACL SAVE: every user, written to the ACL file.
func cmdACLSave(c *Conn, _ [][]byte) {
	s := c.srv
	if s.acl.file == "" {
		c.w.Error(errNoACLFile)
		return
	}
	if err := s.acl.users.SaveFile(s.acl.file); err != nil {
		s.log.Warn("ACL SAVE failed", "file", s.acl.file, "err", err)
		c.w.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
		return
	}
	c.w.OK()
}

func cmdACLHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "ACL",
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.")
}
