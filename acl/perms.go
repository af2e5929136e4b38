package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"maps"
	"slices"
	"strings"

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
	// ErrSelectors refuses Redis 7's selectors, "(rules ...)", which
	// stampedeless does not implement.
	ErrSelectors = errors.New("Selectors are not supported")
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

// Perms are what a user may do. A Perms is never changed once a User holds
// it: a change builds a new one, so a connection checks a command against
// one consistent set of rules without a lock.
type Perms struct {
	enabled   bool
	nopass    bool
	sanitize  sanitize
	passwords []string // SHA-256 hex digests, in the order added

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

	// unrestricted: every command, key and channel, so checks can stop early.
	unrestricted bool
}

// newPerms are a new user's: off, no password, no keys, channels or commands.
func newPerms(t *Table) *Perms {
	return &Perms{cmds: make([]uint64, (t.size()+63)/64)}
}

// defaultPerms are the default user's: on, nopass, ~* &* +@all.
func defaultPerms(t *Table) *Perms {
	p := newPerms(t)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		p.apply(op, t)
	}
	p.seal(t)
	return p
}

// clone returns a copy of p that can be changed.
func (p *Perms) clone() *Perms {
	q := *p
	q.passwords = slices.Clone(p.passwords)
	q.keys = slices.Clone(p.keys)
	q.channels = slices.Clone(p.channels)
	q.cmds = slices.Clone(p.cmds)
	q.firstArgs = maps.Clone(p.firstArgs)
	for id, args := range q.firstArgs {
		q.firstArgs[id] = slices.Clone(args)
	}
	return &q
}

// seal computes what checks use to stop early, once p is complete.
func (p *Perms) seal(t *Table) {
	all := true
	for id := range t.size() {
		if !p.bit(id) {
			all = false
			break
		}
	}
	p.unrestricted = all && p.allKeys && p.allChannels
}

func (p *Perms) bit(id int) bool { return p.cmds[id/64]&(1<<(id%64)) != 0 }

func (p *Perms) setBit(id int, on bool) {
	if on {
		p.cmds[id/64] |= 1 << (id % 64)
	} else {
		p.cmds[id/64] &^= 1 << (id % 64)
	}
}

// allow sets the bit of cmd and of its subcommands, and forgets cmd's
// allowed first arguments, as Redis does for +cmd, -cmd and categories.
func (p *Perms) allow(cmd *Command, on bool) {
	p.setBit(cmd.id, on)
	delete(p.firstArgs, cmd.id)
	for _, sub := range cmd.Subcommands {
		p.setBit(sub.id, on)
	}
}

// allowCategory applies +@cat or -@cat: every command in cat, with its
// subcommands.
func (p *Perms) allowCategory(t *Table, cat Category, on bool) {
	for _, c := range t.InCategory(cat) {
		p.allow(c, on)
	}
}

func (p *Perms) allowAll(on bool) {
	fill := uint64(0)
	if on {
		fill = ^uint64(0)
	}
	for i := range p.cmds {
		p.cmds[i] = fill
	}
	p.future = on
	p.firstArgs = nil
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
		return ErrSelectors
	case lower == "clearselectors":
		// There are no selectors to clear.
	case lower == "reset":
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "-@all"} {
			p.apply(r, t)
		}
	default:
		return p.applySelector(op, lower, t)
	}
	return nil
}

// applySelector applies the rules about keys, channels and commands.
func (p *Perms) applySelector(op, lower string, t *Table) error {
	switch {
	case lower == "allkeys" || op == "~*":
		p.allKeys, p.keys = true, nil
	case lower == "resetkeys":
		p.allKeys, p.keys = false, nil
	case lower == "allchannels" || op == "&*":
		p.allChannels, p.channels = true, nil
	case lower == "resetchannels":
		p.allChannels, p.channels = false, nil
	case lower == "allcommands" || lower == "+@all":
		p.allowAll(true)
	case lower == "nocommands" || lower == "-@all":
		p.allowAll(false)
	case op[0] == '~' || op[0] == '%':
		return p.addKeyPattern(op)
	case op[0] == '&':
		if p.allChannels {
			return ErrChannelAfterAll
		}
		if hasSpaces(op[1:]) {
			return ErrRuleSyntax
		}
		if !slices.Contains(p.channels, op[1:]) {
			p.channels = append(p.channels, op[1:])
		}
	case len(op) > 1 && op[1] == '@' && (op[0] == '+' || op[0] == '-'):
		cat, ok := ParseCategory(op[2:])
		if !ok {
			return ErrUnknownName
		}
		p.allowCategory(t, cat, op[0] == '+')
	case op[0] == '+':
		return p.allowCommand(op[1:], t)
	case op[0] == '-':
		cmd := t.Lookup(op[1:])
		if cmd == nil {
			return ErrUnknownName
		}
		p.allow(cmd, false)
	default:
		return ErrRuleSyntax
	}
	return nil
}

// addKeyPattern applies ~pattern, %R~pattern, %W~pattern or %RW~pattern.
func (p *Perms) addKeyPattern(op string) error {
	if p.allKeys {
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
	for i := range p.keys {
		if p.keys[i].pattern == rest {
			p.keys[i].read = p.keys[i].read || kp.read
			p.keys[i].write = p.keys[i].write || kp.write
			return nil
		}
	}
	p.keys = append(p.keys, kp)
	return nil
}

// allowCommand applies +name: a command, a subcommand (+client|list), or a
// first argument of a command without subcommands (+select|0).
func (p *Perms) allowCommand(name string, t *Table) error {
	bar := strings.LastIndexByte(name, '|')
	if bar < 0 {
		cmd := t.Lookup(name)
		if cmd == nil {
			return ErrUnknownName
		}
		p.allow(cmd, true)
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
		p.allow(sub, true)
	default:
		args := p.firstArgs[cmd.id]
		if slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, arg) }) {
			return nil
		}
		if p.firstArgs == nil {
			p.firstArgs = make(map[int][]string)
		}
		p.firstArgs[cmd.id] = append(args, arg)
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

// AllKeys reports whether the user may name any key.
func (p *Perms) AllKeys() bool { return p.allKeys }

// AllChannels reports whether the user may name any channel.
func (p *Perms) AllChannels() bool { return p.allChannels }

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

// CanRun reports whether the user may run cmd; firstArg is the argument
// after the command's name (nil if none), for rules such as +select|0.
func (p *Perms) CanRun(cmd *Command, firstArg []byte) bool {
	if p.bit(cmd.id) {
		return true
	}
	if firstArg == nil {
		return false
	}
	return slices.ContainsFunc(p.firstArgs[cmd.id], func(a string) bool {
		return strings.EqualFold(a, string(firstArg))
	})
}

// CanAccessKey reports whether the user may access key: read it, write it,
// or both, or neither (a command that only sees whether it exists).
func (p *Perms) CanAccessKey(key []byte, read, write bool) bool {
	if p.allKeys {
		return true
	}
	for _, kp := range p.keys {
		if (kp.read || !read) && (kp.write || !write) && glob.Match([]byte(kp.pattern), string(key)) {
			return true
		}
	}
	return false
}

// ReadsAllKeys reports whether the user may read every key: all keys, or
// a read pattern of "*" itself (%R~*), as Redis requires before SORT's BY
// and GET patterns read keys that no argument names. A pattern that
// happens to match every key the keyspace holds does not count.
func (p *Perms) ReadsAllKeys() bool {
	return p.allKeys || slices.ContainsFunc(p.keys, func(kp keyPattern) bool { return kp.read && kp.pattern == "*" })
}

// CanWritePrefix reports whether the user may write every key that starts
// with prefix (LOADER.REGISTER's prefix, whose keys a loader fills): it
// may write all keys, or has a write pattern of a literal head and one
// trailing '*' (~tenantA:*) that prefix starts with. Other patterns, which
// may match some of those keys and not others, do not count.
func (p *Perms) CanWritePrefix(prefix []byte) bool {
	if p.allKeys {
		return true
	}
	for _, kp := range p.keys {
		head, ok := strings.CutSuffix(kp.pattern, "*")
		if kp.write && ok && !strings.ContainsAny(head, "*?[\\") && strings.HasPrefix(string(prefix), head) {
			return true
		}
	}
	return false
}

// CanAccessChannel reports whether the user may publish or subscribe to
// channel. A pattern, as PSUBSCRIBE takes, must equal one of the user's
// channel patterns; a channel must match one.
func (p *Perms) CanAccessChannel(channel []byte, pattern bool) bool {
	if p.allChannels {
		return true
	}
	for _, c := range p.channels {
		if pattern && c == string(channel) || !pattern && glob.Match([]byte(c), string(channel)) {
			return true
		}
	}
	return false
}
