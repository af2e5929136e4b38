package acl

import "strings"

// redisCommands are the commands and subcommands of Redis 7.0 that a
// server of this project may not serve (replication, cluster, AOF), with
// Redis's categories: a rule may name them, as it may on redis-server,
// and users are described with them as Redis describes them. A container
// comes before its subcommands.
var redisCommands = []struct {
	name string
	cats Category
}{
	{"asking", Fast | Connection},
	{"bgrewriteaof", Admin | Slow | Dangerous},
	{"cluster", Slow},
	{"cluster|addslots", Admin | Slow | Dangerous},
	{"cluster|addslotsrange", Admin | Slow | Dangerous},
	{"cluster|bumpepoch", Admin | Slow | Dangerous},
	{"cluster|count-failure-reports", Admin | Slow | Dangerous},
	{"cluster|countkeysinslot", Slow},
	{"cluster|delslots", Admin | Slow | Dangerous},
	{"cluster|delslotsrange", Admin | Slow | Dangerous},
	{"cluster|failover", Admin | Slow | Dangerous},
	{"cluster|flushslots", Admin | Slow | Dangerous},
	{"cluster|forget", Admin | Slow | Dangerous},
	{"cluster|getkeysinslot", Slow},
	{"cluster|help", Slow},
	{"cluster|info", Slow},
	{"cluster|keyslot", Slow},
	{"cluster|links", Slow},
	{"cluster|meet", Admin | Slow | Dangerous},
	{"cluster|myid", Slow},
	{"cluster|nodes", Slow},
	{"cluster|replicas", Admin | Slow | Dangerous},
	{"cluster|replicate", Admin | Slow | Dangerous},
	{"cluster|reset", Admin | Slow | Dangerous},
	{"cluster|saveconfig", Admin | Slow | Dangerous},
	{"cluster|set-config-epoch", Admin | Slow | Dangerous},
	{"cluster|setslot", Admin | Slow | Dangerous},
	{"cluster|shards", Slow},
	{"cluster|slaves", Admin | Slow | Dangerous},
	{"cluster|slots", Slow},
	{"failover", Admin | Slow | Dangerous},
	{"latency", Slow},
	{"latency|graph", Admin | Slow | Dangerous},
	{"latency|histogram", Admin | Slow | Dangerous},
	{"psync", Admin | Slow | Dangerous},
	{"readonly", Fast | Connection},
	{"readwrite", Fast | Connection},
	{"replconf", Admin | Slow | Dangerous},
	{"restore-asking", Keyspace | Write | Slow | Dangerous},
	{"sync", Admin | Slow | Dangerous},
}

// WithRedisCommands returns cmds with the Redis 7.0 commands and
// subcommands they lack added, for NewTable: a server's table of rules
// then knows every name redis-server's does. A subcommand is added to its
// container in cmds, if there is one. It takes ownership of cmds.
func WithRedisCommands(cmds []*Command) []*Command {
	byName := make(map[string]*Command)
	for _, c := range cmds {
		byName[c.Name] = c
		for _, sub := range c.Subcommands {
			byName[sub.Name] = sub
		}
	}
	for _, rc := range redisCommands {
		if byName[rc.name] != nil {
			continue
		}
		c := &Command{Name: rc.name, Categories: rc.cats}
		byName[rc.name] = c
		if parent, _, ok := strings.Cut(rc.name, "|"); ok {
			byName[parent].Subcommands = append(byName[parent].Subcommands, c)
		} else {
			cmds = append(cmds, c)
		}
	}
	return cmds
}
