package keyspace

import (
	"slices"

	"github.com/stampedeless/stampedeless/commands"
)

// Commands are the family's commands, for the server's table: each
// type's table is in its file, beside its handlers.
func Commands() []*commands.Spec {
	return slices.Concat(
		stringCommands(), bitmapCommands(), hashCommands(), setCommands(), sortedSetCommands(),
		hyperLogLogCommands(), listCommands(), geoCommands(), keyCommands(), streamCommands(), serverCommands(),
	)
}
