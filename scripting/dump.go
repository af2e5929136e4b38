package scripting

import (
	"errors"

	"github.com/stampedeless/stampedeless/rdb"
)

// FUNCTION DUMP's payload is Redis 7.0's, rdb's DumpFunctions: byte for
// byte what redis-server writes for the same libraries.

const errBadPayload = Error("ERR DUMP payload version or checksum are wrong")

// decodeDump reads FUNCTION RESTORE's payload, its errors Redis's replies.
func decodeDump(p []byte) ([]string, error) {
	codes, err := rdb.ParseFunctions(p)
	switch {
	case err == nil:
		return codes, nil
	case errors.Is(err, rdb.ErrDumpPayload):
		return nil, errBadPayload
	case errors.Is(err, rdb.ErrNotFunction):
		return nil, Error("ERR given type is not a function")
	}
	return nil, Error("ERR failed loading the given functions payload")
}
