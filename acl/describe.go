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
	// Commands are the command rules: "+@all", or "-@all +@read -keys".
	Commands string
	// Keys are the key patterns ("~*", or "~a* %R~b*"), Channels the
	// channel patterns ("&*", or "&a &b").
	Keys, Channels string
}

// Describe returns p's rules as ACL GETUSER shows them.
func (p *Perms) Describe(t *Table) Description {
	d := Description{Flags: p.flags(), Passwords: p.passwords, Commands: p.describeCommands(t)}
	if p.allKeys {
		d.Keys = "~*"
	} else {
		parts := make([]string, len(p.keys))
		for i, kp := range p.keys {
			parts[i] = kp.String()
		}
		d.Keys = strings.Join(parts, " ")
	}
	if p.allChannels {
		d.Channels = "&*"
	} else {
		parts := make([]string, len(p.channels))
		for i, c := range p.channels {
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
func (p *Perms) Rules(t *Table) string {
	var b strings.Builder
	for _, f := range p.flags() {
		b.WriteString(f + " ")
	}
	for _, h := range p.passwords {
		b.WriteString("#" + h + " ")
	}
	if p.allKeys {
		b.WriteString("~* ")
	} else {
		for _, kp := range p.keys {
			b.WriteString(kp.String() + " ")
		}
	}
	if p.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range p.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(p.describeCommands(t))
	return b.String()
}

// describeCommands returns the command rules that rebuild p's commands,
// as Redis 7.0 finds them: start from +@all if p allows future commands,
// else from -@all; then, while some category not yet used has more of its
// commands in agreement with p than not, apply the one that leaves the
// fewest differences; then add or remove single commands, and list the
// allowed first arguments.
func (p *Perms) describeCommands(t *Table) string {
	additive := !p.future
	var rules []string
	fake := newPerms(t)
	if additive {
		rules = append(rules, "-@all")
	} else {
		rules = append(rules, "+@all")
		fake.allowAll(true)
	}
	// temp keeps the commands not yet accounted for by a category.
	temp := p.clone()
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
		if want := p.bit(c.id); want != fake.bit(c.id) {
			sign := "-"
			if want {
				sign = "+"
			}
			rules = append(rules, sign+c.Name)
			fake.allow(c, want)
		}
		if !p.bit(c.id) {
			for _, a := range p.firstArgs[c.id] {
				rules = append(rules, "+"+c.Name+"|"+a)
			}
		}
	}
	return strings.Join(rules, " ")
}
