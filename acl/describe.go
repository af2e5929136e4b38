package acl

import (
	"math"
	"strings"
)

// Description is a user's rules as ACL GETUSER shows them, each part in
// the syntax ACL SETUSER takes.
type Description struct {
	// Flags are "on" or "off", then "nopass" and the sanitize-payload flag
	// if set.
	Flags []string
	// Passwords are the SHA-256 hex digests.
	Passwords []string
	// SelectorDescription is the root selector's rules.
	SelectorDescription
	// Selectors are the other selectors', in the order added.
	Selectors []SelectorDescription
}

// SelectorDescription is one selector's rules as ACL GETUSER shows them.
type SelectorDescription struct {
	// Commands are the command rules: "+@all", or "-@all +@read -keys".
	Commands string
	// Keys are the key patterns ("~*", or "~a* %R~b*"), Channels the
	// channel patterns ("&*", or "&a &b").
	Keys, Channels string
}

// Describe returns p's rules as ACL GETUSER shows them.
func (p *Perms) Describe(t *Table) Description {
	d := Description{Flags: p.flags(), Passwords: p.passwords, SelectorDescription: p.root.describe(t)}
	for _, s := range p.selectors {
		d.Selectors = append(d.Selectors, s.describe(t))
	}
	return d
}

func (s *selector) describe(t *Table) SelectorDescription {
	d := SelectorDescription{Commands: s.describeCommands(t)}
	if s.allKeys {
		d.Keys = "~*"
	} else {
		parts := make([]string, len(s.keys))
		for i, kp := range s.keys {
			parts[i] = kp.String()
		}
		d.Keys = strings.Join(parts, " ")
	}
	if s.allChannels {
		d.Channels = "&*"
	} else {
		parts := make([]string, len(s.channels))
		for i, c := range s.channels {
			parts[i] = "&" + c
		}
		d.Channels = strings.Join(parts, " ")
	}
	return d
}

func (p *Perms) flags() []string {
	flags := []string{"off"}
	if p.enabled {
		flags[0] = "on"
	}
	if p.nopass {
		flags = append(flags, "nopass")
	}
	switch p.sanitize {
	case sanitizeSkip:
		flags = append(flags, "skip-sanitize-payload")
	case sanitizeOn:
		flags = append(flags, "sanitize-payload")
	}
	return flags
}

func (kp keyPattern) String() string {
	switch {
	case kp.read && kp.write:
		return "~" + kp.pattern
	case kp.read:
		return "%R~" + kp.pattern
	}
	return "%W~" + kp.pattern
}

// Rules returns p as one line of rules, as ACL LIST shows a user after its
// name and an ACL file holds it: setting them on a new user gives p again.
// The selectors other than the root follow in parentheses.
func (p *Perms) Rules(t *Table) string {
	var b strings.Builder
	for _, f := range p.flags() {
		b.WriteString(f + " ")
	}
	for _, h := range p.passwords {
		b.WriteString("#" + h + " ")
	}
	b.WriteString(p.root.rules(t))
	for _, s := range p.selectors {
		b.WriteString(" (" + s.rules(t) + ")")
	}
	return b.String()
}

// rules are s's keys, channels and commands as one line of rules.
func (s *selector) rules(t *Table) string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, kp := range s.keys {
			b.WriteString(kp.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(s.describeCommands(t))
	return b.String()
}

// describeCommands returns the command rules that rebuild s's commands,
// as Redis 7.0 finds them: start from +@all if s allows future commands,
// else from -@all; then, while some category not yet used has more of its
// commands in agreement with s than not, apply the one that leaves the
// fewest differences; then add or remove single commands, and list the
// allowed first arguments.
func (s *selector) describeCommands(t *Table) string {
	additive := !s.future
	var rules []string
	fake := newSelector(t)
	if additive {
		rules = append(rules, "-@all")
	} else {
		rules = append(rules, "+@all")
		fake.allowAll(true)
	}
	// temp keeps the commands not yet accounted for by a category.
	temp := s.clone()
	applied := make([]bool, len(categoryNames))
	for {
		best, minDiff, maxSame := -1, math.MaxInt, 0
		for i := range categoryNames {
			if applied[i] {
				continue
			}
			on, off := 0, 0
			for _, c := range t.InCategory(1 << i) {
				if temp.bit(c.id) {
					on++
				} else {
					off++
				}
			}
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < minDiff || diff == minDiff && same > maxSame) {
				best, minDiff, maxSame = i, diff, same
			}
		}
		if best < 0 {
			break
		}
		cat := Category(1) << best
		fake.allowCategory(t, cat, additive)
		temp.allowCategory(t, cat, !additive)
		sign := "-@"
		if additive {
			sign = "+@"
		}
		rules = append(rules, sign+categoryNames[best])
		applied[best] = true
	}
	for _, c := range t.cmds {
		if want := s.bit(c.id); want != fake.bit(c.id) {
			sign := "-"
			if want {
				sign = "+"
			}
			rules = append(rules, sign+c.Name)
			fake.allow(c, want)
		}
		if !s.bit(c.id) {
			for _, a := range s.firstArgs[c.id] {
				rules = append(rules, "+"+c.Name+"|"+a)
			}
		}
	}
	return strings.Join(rules, " ")
}
