package server

import (
	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
)

// Redis Cluster's commands answer as a redis-server with cluster support
// off answers them: this server is never a Redis Cluster node (several
// replicas share work through --redis instead), and a client that asks
// (CLUSTER INFO, CLUSTER SLOTS, READONLY) gets that server's reply, while
// COMMAND, ACL rules and scripts see the commands Redis has.

const errClusterDisabled = "ERR This instance has cluster support disabled"

func cmdClusterDisabled(c *Conn, _ [][]byte) { c.w.Error(errClusterDisabled) }

// clusterSpecs are CLUSTER and its subcommands, READONLY, READWRITE and
// ASKING, with Redis 7.0's arity, flags and categories.
func clusterSpecs() []*commands.Spec {
	admin := commands.Admin | commands.Stale
	sub := func(name string, arity int, flags commands.Flags, since, summary string) *commands.Spec {
		return &commands.Spec{Name: "cluster|" + name, Arity: arity, Flags: flags, Handler: conn(cmdClusterDisabled),
			Summary: summary, Since: since}
	}
	clientSide := func(name string, flags commands.Flags, summary string) *commands.Spec {
		return &commands.Spec{Name: name, Arity: 1, Flags: flags, Handler: conn(cmdClusterDisabled), ACL: acl.Connection,
			Group: "cluster", Summary: summary, Since: "3.0.0"}
	}
	return []*commands.Spec{
		{Name: "cluster", Arity: -2, Group: "cluster", Since: "3.0.0",
			Summary: "Redis Cluster's commands: each answers that cluster support is disabled, as a redis-server without it does.",
			Usage:   "subcommand [argument ...]", Subcommands: []*commands.Spec{
				sub("addslots", -3, admin, "3.0.0", "Assign new hash slots to receiving node"),
				sub("addslotsrange", -4, admin, "7.0.0", "Assign new hash slots to receiving node"),
				sub("bumpepoch", 2, admin, "3.0.0", "Advance the cluster config epoch"),
				sub("count-failure-reports", 3, admin, "3.0.0", "Return the number of failure reports active for a given node"),
				sub("countkeysinslot", 3, commands.Stale, "3.0.0", "Return the number of local keys in the specified hash slot"),
				sub("delslots", -3, admin, "3.0.0", "Set hash slots as unbound in receiving node"),
				sub("delslotsrange", -4, admin, "7.0.0", "Set hash slots as unbound in receiving node"),
				sub("failover", -2, admin, "3.0.0", "Forces a replica to perform a manual failover of its master."),
				sub("flushslots", 2, admin, "3.0.0", "Delete a node's own slots information"),
				sub("forget", 3, admin, "3.0.0", "Remove a node from the nodes table"),
				sub("getkeysinslot", 4, commands.Stale, "3.0.0", "Return local key names in the specified hash slot"),
				sub("help", 2, commands.Loading|commands.Stale, "5.0.0", "Show helpful text about the different subcommands"),
				sub("info", 2, commands.Stale, "3.0.0", "Provides info about Redis Cluster node state"),
				sub("keyslot", 3, commands.Stale, "3.0.0", "Returns the hash slot of the specified key"),
				sub("links", 2, commands.Stale, "7.0.0", "Returns a list of all TCP links to and from peer nodes in cluster"),
				sub("meet", -4, admin, "3.0.0", "Force a node cluster to handshake with another node"),
				sub("myid", 2, commands.Stale, "3.0.0", "Return the node id"),
				sub("nodes", 2, commands.Stale, "3.0.0", "Get Cluster config for the node"),
				sub("replicas", 3, admin, "5.0.0", "List replica nodes of the specified master node"),
				sub("replicate", 3, admin, "3.0.0", "Reconfigure a node as a replica of the specified master node"),
				sub("reset", -2, admin|commands.NoScript, "3.0.0", "Reset a Redis Cluster node"),
				sub("saveconfig", 2, admin, "3.0.0", "Forces the node to save cluster state on disk"),
				sub("set-config-epoch", 3, admin, "3.0.0", "Set the configuration epoch in a new node"),
				sub("setslot", -4, admin, "3.0.0", "Bind a hash slot to a specific node"),
				sub("shards", 2, commands.Stale, "7.0.0", "Get array of cluster slots to node mappings"),
				sub("slaves", 3, admin, "3.0.0", "List replica nodes of the specified master node"),
				sub("slots", 2, commands.Stale, "3.0.0", "Get array of Cluster slot to node mappings"),
			}},
		clientSide("readonly", commands.Fast|commands.Loading|commands.Stale, "Enables read queries for a connection to a cluster replica node"),
		clientSide("readwrite", commands.Fast|commands.Loading|commands.Stale, "Disables read queries for a connection to a cluster replica node"),
		clientSide("asking", commands.Fast, "Sent by cluster clients after an -ASK redirect"),
	}
}
