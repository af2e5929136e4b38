package server

import (
	"math"
	"strconv"
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

// replicaMinimum is min-replicas-to-write and min-replicas-max-lag. This
// server has no replicas, so with both set (Redis's checkGoodReplicasStatus)
// every write is refused with errNoReplicas, as a Redis primary with none
// refuses them: a client that asks for the guarantee is told it does not
// hold. The zero value is Redis's defaults.
type replicaMinimum struct {
	mu sync.Mutex // serializes changes of the two values
	// toWrite is min-replicas-to-write; lagOver10 is min-replicas-max-lag
	// less its default 10, so that the zero value is the defaults.
	toWrite, lagOver10 int64
	refuse             atomic.Bool // both are set: writes are refused
}

// on reports whether writes are refused.
func (r *replicaMinimum) on() bool { return r.refuse.Load() }

func (r *replicaMinimum) set(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
	r.refuse.Store(r.toWrite > 0 && r.lagOver10+10 > 0)
}

func (r *replicaMinimum) get(v *int64, plus int64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strconv.FormatInt(*v+plus, 10)
}

func getMinReplicasToWrite(s *Server) string {
	return s.replicaMinimum.get(&s.replicaMinimum.toWrite, 0)
}

func getMinReplicasMaxLag(s *Server) string {
	return s.replicaMinimum.get(&s.replicaMinimum.lagOver10, 10)
}

func setMinReplicasToWrite(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, math.MaxInt32)
	if err == nil {
		s.replicaMinimum.set(func() { s.replicaMinimum.toWrite = n })
	}
	return err
}

func setMinReplicasMaxLag(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, math.MaxInt32)
	if err == nil {
		s.replicaMinimum.set(func() { s.replicaMinimum.lagOver10 = n - 10 })
	}
	return err
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
