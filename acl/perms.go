package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/stampedeless/stampedeless/internal/argsplit"
	"github.com/stampedeless/stampedeless/internal/glob"
)

// The reasons a rule is refused, in Redis's words.
var (
	ErrUnknownName = errors.New("Unknown command or category name in ACL")
	ErrRuleSyntax  = errors.New("Syntax error")
	ErrKeyAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and " +
		"does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	ErrChannelAfterAll = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid " +
		"and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	ErrNoSuchPassword = errors.New("The password you are trying to remove from the user does not exist")
	ErrBadHash        = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	ErrSubcommandArg  = errors.New("Allowing first-arg of a subcommand is not supported")
)

// sanitize is a user's sanitize-payload flag: unset, or one of the two.
type sanitize uint8

const (
	sanitizeUnset sanitize = iota
	sanitizeSkip           // skip-sanitize-payload
	sanitizeOn             // sanitize-payload
)

// keyPattern is a key glob with the access it grants: ~ both, %R~ reads,
// %W~ writes.
type keyPattern struct {
	pattern     string
	read, write bool
}

// selector is one set of rules about commands, keys and channels, Redis
// 7's: a user has its root selector, the rules given outside parentheses,
// and any number of others, "(rules ...)". A call is allowed when one
// selector allows all of it: the command, every key, every channel.
type selector struct {
	allKeys     bool
	keys        []keyPattern
	allChannels bool
	channels    []string

	// future is set by +@all (and cleared by -@all): commands the table
	// does not know are allowed too, and the rules are described starting
	// from +@all.
	future bool
	cmds   []uint64 // one bit per Table command
	// firstArgs are the first arguments allowed of a command whose bit is
	// clear (+select|0), by command id.
	firstArgs map[int][]string
}

// Perms are what a user may do. A Perms is never changed once a User holds
// it: a change builds a new one, so a connection checks a command against
// one consistent set of rules without a lock.
type Perms struct {
	enabled   bool
	nopass    bool
	sanitize  sanitize
	passwords []string // SHA-256 hex digests, in the order added

	root selector
	// selectors are the user's other selectors, in the order added.
	selectors []*selector

	// sealed are the root and the other selectors, set by seal so that
	// checks do not build the list.
	sealed []*selector
	// unrestricted: one selector allows every command, key and channel,
	// so checks can stop early.
	unrestricted bool
}

// newSelector is a selector that allows nothing.
func newSelector(t *Table) selector { return selector{cmds: make([]uint64, (t.size()+63)/64)} }

// newPerms are a new user's: off, no password, no keys, channels or commands.
func newPerms(t *Table) *Perms { return &Perms{root: newSelector(t)} }

// defaultPerms are the default user's: on, nopass, ~* &* +@all.
func defaultPerms(t *Table) *Perms {
	p := newPerms(t)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		p.apply(op, t)
	}
	p.seal(t)
	return p
}

// clone returns a copy of s that can be changed.
func (s *selector) clone() selector {
	q := *s
	q.keys = slices.Clone(s.keys)
	q.channels = slices.Clone(s.channels)
	q.cmds = slices.Clone(s.cmds)
	q.firstArgs = maps.Clone(s.firstArgs)
	for id, args := range q.firstArgs {
		q.firstArgs[id] = slices.Clone(args)
	}
	return q
}

// clone returns a copy of p that can be changed.
func (p *Perms) clone() *Perms {
	q := *p
	q.passwords = slices.Clone(p.passwords)
	q.root = p.root.clone()
	q.sealed = nil // p's root, not q's
	q.selectors = make([]*selector, len(p.selectors))
	for i, s := range p.selectors {
		c := s.clone()
		q.selectors[i] = &c
	}
	return &q
}

// all returns p's selectors, the root first.
func (p *Perms) all() []*selector {
	if p.sealed != nil {
		return p.sealed
	}
	return append([]*selector{&p.root}, p.selectors...)
}

// seal computes what checks use, once p is complete.
func (p *Perms) seal(t *Table) {
	p.sealed = nil
	p.sealed = p.all()
	p.unrestricted = slices.ContainsFunc(p.all(), func(s *selector) bool {
		if !s.allKeys || !s.allChannels {
			return false
		}
		for id := range t.size() {
			if !s.bit(id) {
				return false
			}
		}
		return true
	})
}

func (s *selector) bit(id int) bool { return s.cmds[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.cmds[id/64] |= 1 << (id % 64)
	} else {
		s.cmds[id/64] &^= 1 << (id % 64)
	}
}

// allow sets the bit of cmd and of its subcommands, and forgets cmd's
// allowed first arguments, as Redis does for +cmd, -cmd and categories.
func (s *selector) allow(cmd *Command, on bool) {
	s.setBit(cmd.id, on)
	delete(s.firstArgs, cmd.id)
	for _, sub := range cmd.Subcommands {
		s.setBit(sub.id, on)
	}
}

// allowCategory applies +@cat or -@cat: every command in cat, with its
// subcommands.
func (s *selector) allowCategory(t *Table, cat Category, on bool) {
	for _, c := range t.InCategory(cat) {
		s.allow(c, on)
	}
}

func (s *selector) allowAll(on bool) {
	fill := uint64(0)
	if on {
		fill = ^uint64(0)
	}
	for i := range s.cmds {
		s.cmds[i] = fill
	}
	s.future = on
	s.firstArgs = nil
}

// hashPassword is the SHA-256 hex digest Redis keeps of a password.
func hashPassword(pass []byte) string {
	sum := sha256.Sum256(pass)
	return hex.EncodeToString(sum[:])
}

// validHash reports whether h is a SHA-256 hex digest in lower case.
func validHash(h string) bool {
	return len(h) == sha256.Size*2 && !strings.ContainsFunc(h, func(r rune) bool {
		return (r < '0' || r > '9') && (r < 'a' || r > 'f')
	})
}

// passwordDigest is the digest a password rule names: >password and
// <password give the password, #digest and !digest the digest itself.
func passwordDigest(op string) (string, error) {
	if op[0] == '>' || op[0] == '<' {
		return hashPassword([]byte(op[1:])), nil
	}
	if !validHash(op[1:]) {
		return "", ErrBadHash
	}
	return op[1:], nil
}

// hasSpaces reports whether s has a space or a NUL, which patterns and user
// names may not have.
func hasSpaces(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == 0
	})
}

// apply changes p by one rule, Redis's ACL SETUSER syntax, and returns why
// the rule is refused, if it is (p may then be half changed).
func (p *Perms) apply(op string, t *Table) error {
	lower := strings.ToLower(op)
	switch {
	case op == "":
	case lower == "on":
		p.enabled = true
	case lower == "off":
		p.enabled = false
	case lower == "skip-sanitize-payload":
		p.sanitize = sanitizeSkip
	case lower == "sanitize-payload":
		p.sanitize = sanitizeOn
	case lower == "nopass":
		p.nopass, p.passwords = true, nil
	case lower == "resetpass":
		p.nopass, p.passwords = false, nil
	case op[0] == '>' || op[0] == '#':
		h, err := passwordDigest(op)
		if err != nil {
			return err
		}
		if !slices.Contains(p.passwords, h) {
			p.passwords = append(p.passwords, h)
		}
		p.nopass = false
	case op[0] == '<' || op[0] == '!':
		h, err := passwordDigest(op)
		if err != nil {
			return err
		}
		i := slices.Index(p.passwords, h)
		if i < 0 {
			return ErrNoSuchPassword
		}
		p.passwords = slices.Delete(p.passwords, i, i+1)
	case op[0] == '(' && op[len(op)-1] == ')':
		s, err := parseSelector(op[1:len(op)-1], t)
		if err != nil {
			return err
		}
		p.selectors = append(p.selectors, s)
	case lower == "clearselectors":
		p.selectors = nil
	case lower == "reset":
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors", "-@all"} {
			p.apply(r, t)
		}
	default:
		return p.root.apply(op, lower, t)
	}
	return nil
}

// parseSelector is the selector of the rules inside "(...)", split as
// Redis splits them (sdssplitargs): it allows nothing but what they say.
func parseSelector(rules string, t *Table) (*selector, error) {
	ops, ok := argsplit.Split(nil, nil, []byte(rules))
	if !ok {
		return nil, ErrRuleSyntax
	}
	s := newSelector(t)
	for _, op := range ops {
		if len(op) == 0 {
			continue
		}
		if err := s.apply(string(op), strings.ToLower(string(op)), t); err != nil {
			return nil, err
		}
	}
	return &s, nil
}

// apply applies one rule about keys, channels or commands.
func (s *selector) apply(op, lower string, t *Table) error {
	switch {
	case lower == "allkeys" || op == "~*":
		s.allKeys, s.keys = true, nil
	case lower == "resetkeys":
		s.allKeys, s.keys = false, nil
	case lower == "allchannels" || op == "&*":
		s.allChannels, s.channels = true, nil
	case lower == "resetchannels":
		s.allChannels, s.channels = false, nil
	case lower == "allcommands" || lower == "+@all":
		s.allowAll(true)
	case lower == "nocommands" || lower == "-@all":
		s.allowAll(false)
	case op[0] == '~' || op[0] == '%':
		return s.addKeyPattern(op)
	case op[0] == '&':
		if s.allChannels {
			return ErrChannelAfterAll
		}
		if hasSpaces(op[1:]) {
			return ErrRuleSyntax
		}
		if !slices.Contains(s.channels, op[1:]) {
			s.channels = append(s.channels, op[1:])
		}
	case len(op) > 1 && op[1] == '@' && (op[0] == '+' || op[0] == '-'):
		cat, ok := ParseCategory(op[2:])
		if !ok {
			return ErrUnknownName
		}
		s.allowCategory(t, cat, op[0] == '+')
	case op[0] == '+':
		return s.allowCommand(op[1:], t)
	case op[0] == '-':
		cmd := t.Lookup(op[1:])
		if cmd == nil {
			return ErrUnknownName
		}
		s.allow(cmd, false)
	default:
		return ErrRuleSyntax
	}
	return nil
}

// addKeyPattern applies ~pattern, %R~pattern, %W~pattern or %RW~pattern.
func (s *selector) addKeyPattern(op string) error {
	if s.allKeys {
		return ErrKeyAfterAll
	}
	kp := keyPattern{read: true, write: true}
	rest := op[1:]
	if op[0] == '%' {
		kp = keyPattern{}
		i := 0
	flags:
		for ; i < len(rest); i++ {
			switch {
			case (rest[i] == 'R' || rest[i] == 'r') && !kp.read:
				kp.read = true
			case (rest[i] == 'W' || rest[i] == 'w') && !kp.write:
				kp.write = true
			case rest[i] == '~':
				break flags
			default:
				return ErrRuleSyntax
			}
		}
		// Redis takes "%R" and "%~x" too, and then cannot describe them;
		// they are refused here.
		if i == len(rest) || !kp.read && !kp.write {
			return ErrRuleSyntax
		}
		rest = rest[i+1:]
	}
	if hasSpaces(rest) {
		return ErrRuleSyntax
	}
	kp.pattern = rest
	for i := range s.keys {
		if s.keys[i].pattern == rest {
			s.keys[i].read = s.keys[i].read || kp.read
			s.keys[i].write = s.keys[i].write || kp.write
			return nil
		}
	}
	s.keys = append(s.keys, kp)
	return nil
}

// allowCommand applies +name: a command, a subcommand (+client|list), or a
// first argument of a command without subcommands (+select|0).
func (s *selector) allowCommand(name string, t *Table) error {
	bar := strings.LastIndexByte(name, '|')
	if bar < 0 {
		cmd := t.Lookup(name)
		if cmd == nil {
			return ErrUnknownName
		}
		s.allow(cmd, true)
		return nil
	}
	cmd, arg := t.Lookup(name[:bar]), name[bar+1:]
	switch {
	case cmd == nil:
		return ErrUnknownName
	case cmd.parent != nil:
		return ErrSubcommandArg
	case arg == "":
		return ErrRuleSyntax
	case len(cmd.Subcommands) > 0:
		sub := t.Lookup(name)
		if sub == nil {
			return ErrUnknownName
		}
		s.allow(sub, true)
	default:
		args := s.firstArgs[cmd.id]
		if slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, arg) }) {
			return nil
		}
		if s.firstArgs == nil {
			s.firstArgs = make(map[int][]string)
		}
		s.firstArgs[cmd.id] = append(args, arg)
	}
	return nil
}

// Enabled reports whether the user is on: whether it can authenticate.
func (p *Perms) Enabled() bool { return p.enabled }

// NoPass reports whether any password authenticates the user.
func (p *Perms) NoPass() bool { return p.nopass }

// Unrestricted reports whether the user may run every command on every key
// and channel, so a caller can skip the checks.
func (p *Perms) Unrestricted() bool { return p.unrestricted }

// AllKeys reports whether the user may name any key: one of its selectors
// may.
func (p *Perms) AllKeys() bool {
	return slices.ContainsFunc(p.all(), func(s *selector) bool { return s.allKeys })
}

// AllChannels reports whether the user may name any channel: one of its
// selectors may.
func (p *Perms) AllChannels() bool {
	return slices.ContainsFunc(p.all(), func(s *selector) bool { return s.allChannels })
}

// CheckPassword reports whether pass authenticates the user (any does with
// nopass), comparing digests in constant time.
func (p *Perms) CheckPassword(pass []byte) bool {
	if p.nopass {
		return true
	}
	h := []byte(hashPassword(pass))
	ok := false
	for _, want := range p.passwords {
		if subtle.ConstantTimeCompare(h, []byte(want)) == 1 {
			ok = true
		}
	}
	return ok
}

// Call is one call of a command as the rules check it: the caller knows
// which arguments are keys and channels.
type Call struct {
	Cmd *Command
	// NoAuth: the command needs no authentication (AUTH, HELLO), so every
	// selector allows it; its keys and channels are still checked.
	NoAuth bool
	// FirstArg is the argument after the command's name (nil if none), for
	// rules such as +select|0.
	FirstArg []byte
	Keys     []KeyUse
	// Prefix, if set, is a key prefix the call writes every key of
	// (LOADER.REGISTER's, whose keys a loader fills).
	Prefix   []byte
	Channels []ChannelUse
}

// KeyUse is a key a call names and what it does with it.
type KeyUse struct {
	Key         []byte
	Read, Write bool
}

// ChannelUse is a channel a call names; Pattern for PSUBSCRIBE's.
type ChannelUse struct {
	Channel []byte
	Pattern bool
}

// Check reports whether one of the user's selectors allows all of call. If
// none does, it returns the denial Redis 7.0 reports: a key or channel if
// some selector allowed the command (a channel before a key, then the one
// named last), else the command; object is the key or channel denied.
func (p *Perms) Check(call *Call) (reason Reason, object []byte, ok bool) {
	reason, last := DeniedCommand, -1
	for _, s := range p.all() {
		r, at, allowed := s.check(call)
		if allowed {
			return 0, nil, true
		}
		if r == DeniedCommand {
			continue
		}
		if reason == DeniedCommand || r > reason || r == reason && at > last {
			reason, last = r, at
		}
	}
	switch {
	case reason == DeniedChannel:
		return reason, call.Channels[last].Channel, false
	case reason == DeniedKey && last == len(call.Keys):
		return reason, call.Prefix, false
	case reason == DeniedKey:
		return reason, call.Keys[last].Key, false
	}
	return DeniedCommand, []byte(call.Cmd.Name), false
}

// check is Check of one selector: whether it allows call, and if not why
// and the index of the key (len(call.Keys) for the prefix) or channel
// denied.
func (s *selector) check(call *Call) (Reason, int, bool) {
	if !call.NoAuth && !s.canRun(call.Cmd, call.FirstArg) {
		return DeniedCommand, 0, false
	}
	if !s.allKeys {
		for i, k := range call.Keys {
			if !s.canAccessKey(k.Key, k.Read, k.Write) {
				return DeniedKey, i, false
			}
		}
		if call.Prefix != nil && !s.canWritePrefix(call.Prefix) {
			return DeniedKey, len(call.Keys), false
		}
	}
	if !s.allChannels {
		for i, c := range call.Channels {
			if !s.canAccessChannel(c.Channel, c.Pattern) {
				return DeniedChannel, i, false
			}
		}
	}
	return 0, 0, true
}

// canRun reports whether s allows cmd; firstArg is the argument after the
// command's name (nil if none), for rules such as +select|0.
func (s *selector) canRun(cmd *Command, firstArg []byte) bool {
	if s.bit(cmd.id) {
		return true
	}
	if firstArg == nil {
		return false
	}
	return slices.ContainsFunc(s.firstArgs[cmd.id], func(a string) bool {
		return strings.EqualFold(a, string(firstArg))
	})
}

// CanAccessKey reports whether the user may access key: read it, write it,
// or both, or neither (a command that only sees whether it exists); one
// of its selectors must allow all of that.
func (p *Perms) CanAccessKey(key []byte, read, write bool) bool {
	return slices.ContainsFunc(p.all(), func(s *selector) bool { return s.canAccessKey(key, read, write) })
}

func (s *selector) canAccessKey(key []byte, read, write bool) bool {
	if s.allKeys {
		return true
	}
	for _, kp := range s.keys {
		if (kp.read || !read) && (kp.write || !write) && glob.Match([]byte(kp.pattern), string(key)) {
			return true
		}
	}
	return false
}

// ReadsAllKeys reports whether a selector that allows call (any, for a
// nil call) may read every key: all keys, or a read pattern of "*" itself
// (%R~*), as Redis requires before SORT's BY and GET patterns read keys
// that no argument names. A pattern that happens to match every key the
// keyspace holds does not count.
func (p *Perms) ReadsAllKeys(call *Call) bool {
	return slices.ContainsFunc(p.all(), func(s *selector) bool {
		if !s.allKeys && !slices.ContainsFunc(s.keys, func(kp keyPattern) bool { return kp.read && kp.pattern == "*" }) {
			return false
		}
		if call == nil {
			return true
		}
		_, _, ok := s.check(call)
		return ok
	})
}

// canWritePrefix reports whether s may write every key that starts with
// prefix (LOADER.REGISTER's prefix, whose keys a loader fills): it may
// write all keys, or has a write pattern of a literal head and one
// trailing '*' (~tenantA:*) that prefix starts with. Other patterns, which
// may match some of those keys and not others, do not count.
func (s *selector) canWritePrefix(prefix []byte) bool {
	if s.allKeys {
		return true
	}
	for _, kp := range s.keys {
		head, ok := strings.CutSuffix(kp.pattern, "*")
		if kp.write && ok && !strings.ContainsAny(head, "*?[\\") && strings.HasPrefix(string(prefix), head) {
			return true
		}
	}
	return false
}

// CanAccessChannel reports whether the user may publish or subscribe to
// channel: one of its selectors allows it. A pattern, as PSUBSCRIBE takes,
// must equal one of a selector's channel patterns; a channel must match
// one.
func (p *Perms) CanAccessChannel(channel []byte, pattern bool) bool {
	return slices.ContainsFunc(p.all(), func(s *selector) bool { return s.canAccessChannel(channel, pattern) })
}

func (s *selector) canAccessChannel(channel []byte, pattern bool) bool {
	if s.allChannels {
		return true
	}
	for _, c := range s.channels {
		if pattern && c == string(channel) || !pattern && glob.Match([]byte(c), string(channel)) {
			return true
		}
	}
	return false
}
