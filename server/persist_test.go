package server

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/persist"
)

// startSaving starts a server whose snapshots go to a directory of the
// test's.
func startSaving(t *testing.T) (*testServer, *persist.Saver, string) {
	t.Helper()
	store, err := engine.New(engine.Options{MaxMemory: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	path := filepath.Join(t.TempDir(), "dump.rdb")
	saver := persist.NewSaver(store, path, nil, nil)
	t.Cleanup(saver.Wait)
	return startServer(t, Options{Store: store, Saver: saver}), saver, path
}

// SAVE, BGSAVE's arguments, CONFIG of save, dir and dbfilename, and SAVE
// inside MULTI answer as redis-server 7.0 answers.
func TestCompatPersistence(t *testing.T) {
	ts, _, _ := startSaving(t)
	redisAddr := redistest.Start(t, "--dir", t.TempDir()).Addr()
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "persistence", steps: []compatStep{
			cs("SET k v"), cs("SAVE"), cs("BGSAVE x"), cs("BGSAVE SCHEDULE x"),
			ca("CONFIG", "SET", "save", "100 10 60 1000"), cs("CONFIG GET save"),
			ca("CONFIG", "SET", "save", ""), cs("CONFIG GET save"),
			ca("CONFIG", "SET", "save", "100"), ca("CONFIG", "SET", "save", "0 1"), ca("CONFIG", "SET", "save", "1 -1"),
			ca("CONFIG", "SET", "save", "x 1"), cs("CONFIG GET save"),
			cs("CONFIG SET dir /tmp"), cs("CONFIG SET dbfilename x.rdb"), cs("CONFIG GET dbfilename"),
			cs("MULTI"), cs("SAVE"), cs("EXEC"),
			cs("SAVE k"), cs("LASTSAVE k"),
		}})
	})
}

// LASTSAVE moves with a save, and INFO persistence counts the changes
// since it; the snapshot SAVE wrote loads back.
func TestSaveInfoAndLastSave(t *testing.T) {
	ts, _, path := startSaving(t)
	c := ts.clientRESP2(t)
	ctx := context.Background()
	before := c.LastSave(ctx).Val()
	for i := range 10 {
		c.Set(ctx, "k"+strconv.Itoa(i), "v", 0)
	}
	if info := c.Info(ctx, "persistence").Val(); !strings.Contains(info, "rdb_changes_since_last_save:10\r\n") {
		t.Fatalf("INFO after 10 writes:\n%s", info)
	}
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	info := c.Info(ctx, "persistence").Val()
	for _, want := range []string{"rdb_changes_since_last_save:0\r\n", "rdb_saves:1\r\n", "rdb_bgsave_in_progress:0\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO after SAVE lacks %q:\n%s", want, info)
		}
	}
	if after := c.LastSave(ctx).Val(); after < before {
		t.Errorf("LASTSAVE went from %d to %d", before, after)
	}
	back, _ := engine.New(engine.Options{})
	defer back.Close()
	if res, err := persist.Load(back, path, time.Now(), persist.LoadOptions{}); err != nil || res.Keys != 10 {
		t.Fatalf("loading SAVE's file: %+v %v", res, err)
	}
}

// A BGSAVE of many keys does not stop the server: another client's GETs
// are answered while INFO says the save is still running.
func TestBGSaveKeepsServing(t *testing.T) {
	ts, saver, _ := startSaving(t)
	value := strings.Repeat("v", 100)
	for i := range 300_000 {
		ts.store.Set([]byte("key:"+strconv.Itoa(i)), []byte(value), engine.SetOptions{})
	}
	c := ts.clientRESP2(t)
	ctx := context.Background()
	if got := c.BgSave(ctx).Val(); got != "Background saving started" {
		t.Fatalf("BGSAVE: %q", got)
	}
	answered := 0
	for {
		running := strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress:1\r\n")
		if !running {
			break
		}
		if got := c.Get(ctx, "key:7").Val(); got != value {
			t.Fatalf("GET during BGSAVE: %q", got)
		}
		// Answered while the save ran, if INFO still says so after it.
		if strings.Contains(c.Info(ctx, "persistence").Val(), "rdb_bgsave_in_progress:1\r\n") {
			answered++
		}
	}
	saver.Wait()
	if answered == 0 {
		t.Fatal("no GET was answered while the BGSAVE ran")
	}
	if info := c.Info(ctx, "persistence").Val(); !strings.Contains(info, "rdb_last_bgsave_status:ok\r\n") {
		t.Errorf("after the BGSAVE:\n%s", info)
	}
}
