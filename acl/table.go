package acl

import (
	"slices"
	"strings"
)

// Command is one command as ACL rules see it: its name and categories.
type Command struct {
	// Name is the full name in lower case: "get", or "client|list" for a
	// subcommand.
	Name       string
	Categories Category
	// Subcommands are a container's subcommands (CLIENT's LIST, ...).
	Subcommands []*Command

	id     int // the command's bit in a user's command set
	parent *Command
}

// Table is the set of commands that rules name, each with its bit.
type Table struct {
	// cmds are every command by id: the commands sorted by name, each
	// container followed by its subcommands, sorted too. Rules are
	// described in this order.
	cmds   []*Command
	byName map[string]*Command
}

// NewTable indexes cmds, containers with their subcommands. It takes
// ownership of them.
func NewTable(cmds []*Command) *Table {
	t := &Table{byName: make(map[string]*Command)}
	byName := func(a, b *Command) int { return strings.Compare(a.Name, b.Name) }
	top := slices.SortedFunc(slices.Values(cmds), byName)
	for _, c := range top {
		t.add(c, nil)
		slices.SortFunc(c.Subcommands, byName)
		for _, sub := range c.Subcommands {
			t.add(sub, c)
		}
	}
	return t
}

func (t *Table) add(c, parent *Command) {
	c.id, c.parent = len(t.cmds), parent
	t.cmds = append(t.cmds, c)
	t.byName[c.Name] = c
}

// Lookup returns the command named name, in any case: "get", or
// "client|list" for a subcommand; nil if there is none.
func (t *Table) Lookup(name string) *Command {
	return t.byName[strings.ToLower(name)]
}

// InCategory returns the commands and subcommands in cat, in table order.
func (t *Table) InCategory(cat Category) []*Command {
	var out []*Command
	for _, c := range t.cmds {
		if c.Categories&cat != 0 {
			out = append(out, c)
		}
	}
	return out
}

// size is the number of command bits.
func (t *Table) size() int { return len(t.cmds) }
