package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/cluster"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/rdb"
)

// persistConfig is --dir, --dbfilename, --save and what a load at start
// does with a file it cannot load whole.
type persistConfig struct {
	path            string // "" with no --dir
	points          []persist.SavePoint
	skipUnsupported bool
	emptyIfCorrupt  bool
}

func parsePersist(c *cli.Context) (persistConfig, error) {
	var pc persistConfig
	points, err := persist.ParseSavePoints(c.String("save"))
	if err != nil {
		return pc, fmt.Errorf("--save: %w", err)
	}
	name := c.String("dbfilename")
	if name == "" || filepath.Base(name) != name {
		return pc, fmt.Errorf("--dbfilename: want a file name without a directory, got %q", name)
	}
	pc.points, pc.skipUnsupported, pc.emptyIfCorrupt = points, c.Bool("rdb-skip-unsupported"), c.Bool("rdb-start-empty-if-corrupt")
	if dir := c.String("dir"); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return pc, fmt.Errorf("--dir %s: not a directory", dir)
		}
		pc.path = filepath.Join(dir, name)
	} else if len(points) > 0 {
		return pc, errors.New("--save needs --dir")
	}
	return pc, nil
}

// load makes the Saver and loads its file into store, and rt's state
// beside it, before the server serves: a missing file is an empty start,
// a bad one stops the start (or is set aside by
// --rdb-start-empty-if-corrupt).
func (pc persistConfig) load(store *engine.Store, rt persist.ReadThrough, log *slog.Logger) (*persist.Saver, error) {
	saver := persist.NewSaver(store, pc.path, pc.points, log)
	saver.SetReadThrough(rt)
	if !saver.Enabled() {
		return saver, nil
	}
	// A save cut short by a crash leaves its temporary file; the snapshot
	// beside it is whole.
	if stale, _ := filepath.Glob(filepath.Join(filepath.Dir(pc.path), "temp-*.rdb")); len(stale) > 0 {
		for _, f := range stale {
			os.Remove(f)
		}
		log.Warn("removed the temporary files of saves that did not finish", "files", stale)
	}
	start := time.Now()
	log.Info("loading the snapshot", "path", pc.path)
	res, err := saver.Load(persist.LoadOptions{
		SkipUnsupported: pc.skipUnsupported,
		ProgressEvery:   1 << 20,
		Progress: func(keys int, read, size int64) {
			log.Info("loading the snapshot", "keys", keys, "percent", 100*read/max(size, 1))
		},
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		log.Info("no snapshot yet; starting empty", "path", pc.path)
		return saver, nil
	case errors.Is(err, rdb.ErrCorrupt) && pc.emptyIfCorrupt:
		log.Error("the snapshot is corrupt; starting empty as --rdb-start-empty-if-corrupt says", "path", pc.path, "err", err)
		store.FlushAll()
		return saver, nil
	case errors.Is(err, rdb.ErrCorrupt):
		return nil, fmt.Errorf("%w (--rdb-start-empty-if-corrupt starts empty instead)", err)
	case errors.As(err, new(*rdb.UnsupportedError)):
		return nil, fmt.Errorf("%w (--rdb-skip-unsupported loads the rest)", err)
	case err != nil:
		return nil, err
	}
	log.Info("snapshot loaded", "path", pc.path, "keys", res.Keys, "expired_dropped", res.Expired,
		"skipped", res.Skipped, "bytes", res.Size, "took", time.Since(start))
	return saver, nil
}

// reconcileSnapshot drops, in --redis mode, the keys a snapshot loaded that
// the shared tier no longer holds as the snapshot does: another replica
// wrote, deleted or refilled them while this one was down and could not
// hear of it. It runs before the server serves; with Redis down the
// snapshot is served as it is, as during an outage.
func reconcileSnapshot(ctx context.Context, fleet *cluster.Client, store *engine.Store, log *slog.Logger) {
	if store.Len() == 0 {
		return
	}
	start := time.Now()
	checked, dropped, err := fleet.Reconcile(ctx)
	if err != nil {
		log.Warn("the snapshot could not all be checked against the shared tier; a key another replica changed while this one was down may be served as the snapshot holds it until it expires or is written",
			"checked", checked, "dropped", dropped, "err", err)
		return
	}
	log.Info("snapshot checked against the shared tier", "keys", checked, "dropped_changed_elsewhere", dropped, "took", time.Since(start))
}
