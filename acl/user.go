package acl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultUser is the name of the user every connection starts as.
const DefaultUser = "default"

// User is one user. Its permissions change in place (ACL SETUSER), so the
// connections authenticated as it see the change at their next command.
type User struct {
	name    string
	perms   atomic.Pointer[Perms]
	deleted atomic.Bool
}

// Name is the user's name.
func (u *User) Name() string { return u.name }

// Deleted reports whether the user was deleted, or replaced by ACL LOAD.
// It is set before DelUsers and LoadFile return the user, so a connection
// that becomes the user's and then finds it not deleted is seen by
// whoever closes the deleted user's connections after.
func (u *User) Deleted() bool { return u.deleted.Load() }

// Perms are the user's permissions now.
func (u *User) Perms() *Perms { return u.perms.Load() }

// ErrDefaultUser is ACL DELUSER's refusal to delete the default user.
var ErrDefaultUser = errors.New("The 'default' user cannot be removed")

// ErrUserName refuses a user name with a space or a NUL.
var ErrUserName = errors.New("Usernames can't contain spaces or null characters")

// Registry holds the users, by name. Its methods are safe for concurrent
// use.
type Registry struct {
	table *Table
	def   *User

	mu    sync.Mutex // serialises changes; protects users
	users map[string]*User
}

// NewRegistry returns a registry of commands t with the default user alone:
// on, nopass, every key, channel and command.
func NewRegistry(t *Table) *Registry {
	r := &Registry{table: t, def: &User{name: DefaultUser}, users: make(map[string]*User)}
	r.def.perms.Store(defaultPerms(t))
	r.users[DefaultUser] = r.def
	return r
}

// Table is the command table the rules name.
func (r *Registry) Table() *Table { return r.table }

// Default returns the default user.
func (r *Registry) Default() *User { return r.def }

// AuthRequired reports whether a new connection must authenticate: the
// default user has a password or is off.
func (r *Registry) AuthRequired() bool {
	p := r.def.Perms()
	return !p.nopass || !p.enabled
}

// User returns the user named name, or nil.
func (r *Registry) User(name string) *User {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users[name]
}

// Users returns every user, ordered by name.
func (r *Registry) Users() []*User {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*User, 0, len(r.users))
	for _, u := range r.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *User) int { return strings.Compare(a.name, b.name) })
	return out
}

// Authenticate returns the user named name if it is on and pass is one of
// its passwords (or it has nopass), else nil.
func (r *Registry) Authenticate(name string, pass []byte) *User {
	u := r.User(name)
	if u == nil {
		return nil
	}
	if p := u.Perms(); !p.enabled || !p.CheckPassword(pass) {
		return nil
	}
	return u
}

// Describe returns u's rules as ACL GETUSER shows them.
func (r *Registry) Describe(u *User) Description { return u.Perms().Describe(r.table) }

// Rules returns u's rules as one line, as ACL LIST shows them.
func (r *Registry) Rules(u *User) string { return u.Perms().Rules(r.table) }

// RuleError is a rule that ACL SETUSER refused.
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string {
	return "Error in ACL SETUSER modifier '" + e.Rule + "': " + e.Err.Error()
}

func (e *RuleError) Unwrap() error { return e.Err }

// UnmatchedError is a selector's "(" that no rule closes.
type UnmatchedError struct{ Rule string }

func (e *UnmatchedError) Error() string {
	return "Unmatched parenthesis in acl selector starting at '" + e.Rule + "'."
}

// mergeSelectors joins a selector given over several rules, "(+get" "~k)",
// into one, "(+get ~k)", as Redis does: a rule that opens a parenthesis
// and does not close it starts one, and the rules up to one that ends
// with ')' join it. A selector left open is an *UnmatchedError.
func mergeSelectors(rules []string) ([]string, error) {
	out := make([]string, 0, len(rules))
	open, start := "", -1
	for i, op := range rules {
		switch {
		case op != "" && op[0] == '(' && op[len(op)-1] != ')':
			open, start = op, i
		case start >= 0:
			open += " " + op
			if op != "" && op[len(op)-1] == ')' {
				out = append(out, open)
				start = -1
			}
		default:
			out = append(out, op)
		}
	}
	if start >= 0 {
		return nil, &UnmatchedError{Rule: rules[start]}
	}
	return out, nil
}

// SetUser applies rules to the user named name, creating it if there is
// none, as ACL SETUSER: every rule is applied or, if one is refused
// (a *RuleError), none is. A selector may span several rules; one left
// open is an *UnmatchedError. It returns the user.
func (r *Registry) SetUser(name string, rules []string) (*User, error) {
	if hasSpaces(name) {
		return nil, ErrUserName
	}
	rules, err := mergeSelectors(rules)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u := r.users[name]
	p := newPerms(r.table)
	if u != nil {
		p = u.Perms().clone()
	}
	for _, rule := range rules {
		if err := p.apply(rule, r.table); err != nil {
			return nil, &RuleError{Rule: rule, Err: err}
		}
	}
	p.seal(r.table)
	if u == nil {
		u = &User{name: name}
		r.users[name] = u
	}
	u.perms.Store(p)
	return u, nil
}

// SetDefaultPassword makes pass the default user's only password, or, if
// pass is empty, gives it nopass: Redis's requirepass.
func (r *Registry) SetDefaultPassword(pass string) {
	rule := "nopass"
	if pass != "" {
		rule = ">" + pass
	}
	r.SetUser(DefaultUser, []string{"resetpass", rule})
}

// DelUsers deletes the users named, as ACL DELUSER, and returns those that
// existed. The default user cannot be deleted: naming it deletes none.
func (r *Registry) DelUsers(names []string) ([]*User, error) {
	if slices.Contains(names, DefaultUser) {
		return nil, ErrDefaultUser
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []*User
	for _, n := range names {
		if u := r.users[n]; u != nil {
			delete(r.users, n)
			u.deleted.Store(true)
			gone = append(gone, u)
		}
	}
	return gone, nil
}

// Configure defines users at start-up from lines of "name rules...", as
// Redis's user directives: each name once, the default user starting from
// reset if it is named, and the first refused rule is the error.
func (r *Registry) Configure(lines []string) error {
	seen := make(map[string]bool)
	for _, line := range lines {
		args := strings.Split(strings.TrimSpace(line), " ")
		name := args[0]
		switch {
		case name == "":
			return fmt.Errorf("user %q: no user name", line)
		case seen[name]:
			return fmt.Errorf("user %s: Duplicate user found. A user can only be defined once in config files", name)
		}
		seen[name] = true
		rules := args[1:]
		if name == DefaultUser {
			rules = append([]string{"reset"}, rules...)
		}
		if _, err := r.SetUser(name, rules); err != nil {
			var re *RuleError
			if errors.As(err, &re) {
				return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %w", re.Rule, name, re.Err)
			}
			return fmt.Errorf("user %s: %w", name, err)
		}
	}
	return nil
}

// LoadFile replaces every user with those of an ACL file, as ACL LOAD: one
// "user name rules..." per line, blank lines allowed. If any line is wrong
// nothing changes, and the error lists every problem in Redis's words. A
// file without the default user gives it its initial rules. The default
// user stays the same User; every other user is new, and the old ones are
// returned, since their connections must close (as in Redis).
func (r *Registry) LoadFile(path string) ([]*User, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		// C's strerror text, as Redis gives it: Go's, capitalised.
		var pe *os.PathError
		text := err.Error()
		if errors.As(err, &pe) {
			text = pe.Err.Error()
			text = strings.ToUpper(text[:1]) + text[1:]
		}
		return nil, fmt.Errorf("Error loading ACLs, opening file '%s': %s", path, text)
	}
	users := make(map[string]*User)
	var problems strings.Builder
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		args := strings.Split(line, " ")
		if args[0] != "user" || len(args) < 2 {
			fmt.Fprintf(&problems, "%s:%d should start with user keyword followed by the username. ", path, n)
			continue
		}
		name := args[1]
		if hasSpaces(name) {
			fmt.Fprintf(&problems, "'%s:%d: username '%s' contains invalid characters. ", path, n, name)
			continue
		}
		if users[name] != nil {
			fmt.Fprintf(&problems, "WARNING: Duplicate user '%s' found on line %d. ", name, n)
			continue
		}
		rules, err := mergeSelectors(args[2:])
		if err != nil {
			fmt.Fprintf(&problems, "%s:%d: Unmatched parenthesis in selector definition.", path, n)
			continue
		}
		p := newPerms(r.table)
		syntaxErr := false
		for _, rule := range rules {
			rule = strings.Trim(rule, "\t\r\n")
			err := p.apply(rule, r.table)
			switch {
			case err == nil:
			case errors.Is(err, ErrUnknownName):
				fmt.Fprintf(&problems, "%s:%d: Error in applying operation '%s': %v. ", path, n, rule, err)
			case !syntaxErr:
				fmt.Fprintf(&problems, "%s:%d: %v. ", path, n, err)
				syntaxErr = true
			}
		}
		p.seal(r.table)
		u := &User{name: name}
		u.perms.Store(p)
		users[name] = u
	}
	if problems.Len() > 0 {
		return nil, errors.New(problems.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := users[DefaultUser]; d != nil {
		r.def.perms.Store(d.Perms())
	} else {
		r.def.perms.Store(defaultPerms(r.table))
	}
	users[DefaultUser] = r.def
	var old []*User
	for name, u := range r.users {
		if name != DefaultUser {
			u.deleted.Store(true)
			old = append(old, u)
		}
	}
	r.users = users
	return old, nil
}

// SaveFile writes every user to an ACL file, as ACL SAVE: a temporary file
// renamed over path, so a reader sees the old file or the new one.
func (r *Registry) SaveFile(path string) error {
	var b strings.Builder
	for _, u := range r.Users() {
		b.WriteString("user " + u.name + " " + r.Rules(u) + "\n")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-"+time.Now().Format("20060102150405")+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	// The file keeps its mode; a new one is private, as it holds password
	// digests.
	if fi, err := os.Stat(path); err == nil {
		tmp.Chmod(fi.Mode().Perm())
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
