package server

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/redisconfig"
	"github.com/stampedeless/stampedeless/scripting"
)

// errNoReplicas is Redis's refusal of a write while a primary has fewer
// good replicas than min-replicas-to-write.
const errNoReplicas = "NOREPLICAS Not enough good replicas to write."

// replicaMinimum watches min-replicas-to-write and min-replicas-max-lag,
// kept with Redis's other parameters (redisconfig.Params). This server
// has no replicas, so with both set (Redis's checkGoodReplicasStatus)
// every write is refused with errNoReplicas, as a Redis primary with none
// refuses them: a client that asks for the guarantee is told it does not
// hold.
type replicaMinimum struct {
	mu     sync.Mutex  // orders a change of either value and the look at both
	refuse atomic.Bool // both are set: writes are refused
}

// on reports whether writes are refused.
func (r *replicaMinimum) on() bool { return r.refuse.Load() }

// replicaParams are the parameters replicaMinimum watches, by the name
// their values are kept under.
var replicaParams = map[string]bool{"min-replicas-to-write": true, "min-replicas-max-lag": true}

// setReplicaParam is CONFIG SET of p, one of replicaParams or an alias of
// one.
func (s *Server) setReplicaParam(p *redisconfig.Param, v string) error {
	r := &s.replicaMinimum
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := s.inertConfig.Set(p, v); err != nil {
		return err
	}
	on := true
	for i := range redisconfig.Params {
		if q := &redisconfig.Params[i]; replicaParams[q.Name] {
			on = on && s.inertConfig.Get(q) != "0"
		}
	}
	r.refuse.Store(on)
	return nil
}

// writes reports whether cmd, with args, is a write for Redis's
// min-replicas check: a write command (or one in the @write category, as
// FUNCTION LOAD, which runs outside the keyspace's section here), an EXEC
// whose queue holds one, or a script or function whose shebang does not
// declare no-writes (a script without one has its write commands refused
// as it calls them).
func (s *Server) writes(c *Conn, cmd *command, args [][]byte) bool {
	switch {
	case cmd.Flags&commands.Write != 0 || cmd.ACL&acl.Write != 0:
		return true
	case cmd.Name == "exec":
		for _, q := range c.tx.queue {
			if q.cmd.Flags&commands.Write != 0 {
				return true
			}
		}
	case cmd.Script && len(args) > 1:
		return s.scriptWrites(cmd, args)
	}
	return false
}

// scriptWrites reports whether the script or function a script command
// runs declares, in its shebang, that it may write.
func (s *Server) scriptWrites(cmd *command, args [][]byte) bool {
	var flags scripting.Flags
	var known bool
	if strings.HasPrefix(cmd.Name, "fcall") {
		flags, known = s.scripts.eng.FunctionFlags(args[1])
	} else {
		flags, known = s.scripts.eng.ScriptFlags(args[1], strings.HasPrefix(cmd.Name, "evalsha"))
	}
	return known && flags&(scripting.FlagEvalCompat|scripting.FlagNoWrites) == 0
}
