package server

// What the function libraries hold is measured, bounded by
// --max-scripts-memory and counted against --max-memory: against
// redis-server where a reply or an INFO field is Redis's.

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/scripting"
)

// bigLibrary is a library whose top level keeps n strings of size bytes
// in its function's upvalue.
func bigLibrary(name string, n, size int) string {
	return lib(name, fmt.Sprintf("local t = {}\nfor i = 1, %d do t[i] = ('x'):rep(%d) .. i end\n", n, size-8)+
		"redis.register_function('"+name+"', function() return #t end)")
}

// TestFunctionLibraryTakesRoomFromKeys: at a 32 MB bound full of keys, a
// library holding 20 MB is charged to the store, so the next writes evict
// keys to make room for it, and FUNCTION DELETE gives the room back. INFO
// memory's used_memory_vm_functions is what the library's Lua objects
// hold and used_memory_functions its entry, in Redis as here.
func TestFunctionLibraryTakesRoomFromKeys(t *testing.T) {
	ctx := context.Background()
	store, err := engine.New(engine.Options{MaxMemory: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	redisC := redis.NewClient(&redis.Options{Addr: startRedis(t)})
	ours := redis.NewClient(&redis.Options{Addr: startServer(t, Options{Store: store}).addr})
	t.Cleanup(func() { redisC.Close(); ours.Close() })
	value := strings.Repeat("v", 10000)
	for i := range 4000 { // 40 MB: the store is full
		if err := ours.Set(ctx, "k"+strconv.Itoa(i), value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	keys := ours.DBSize(ctx).Val()
	costBefore := store.Stats().Cost
	code := bigLibrary("big", 2000, 10000)
	for _, c := range []*redis.Client{redisC, ours} {
		if got := fmtReply(c.Do(ctx, "FUNCTION", "LOAD", code)); got != "big" {
			t.Fatalf("FUNCTION LOAD of a 20 MB library: %s", got)
		}
		if vm := infoInt(t, c, "memory", "used_memory_vm_functions"); vm < 20e6 || vm > 30e6 {
			t.Errorf("used_memory_vm_functions with a library holding 20 MB: %d", vm)
		}
		if overhead := infoInt(t, c, "memory", "used_memory_functions"); overhead < int64(len(code)) || overhead > 64<<10 {
			t.Errorf("used_memory_functions with one library of %d bytes of code: %d", len(code), overhead)
		}
	}
	if got := store.Stats().Cost - costBefore; got < 20e6 {
		t.Errorf("the store was charged %d bytes for the library", got)
	}
	// The writes after the load evict for it: each for as long as
	// maxmemory-eviction-tenacity allows, so a few hundred of them.
	writes := 0
	for ; writes < 2000 && store.Stats().Cost > store.Stats().MaxCost; writes++ {
		ours.Set(ctx, "after"+strconv.Itoa(writes), value, 0)
	}
	if st := store.Stats(); st.Cost > st.MaxCost {
		t.Errorf("the store's cost %d is past its bound %d after %d writes", st.Cost, st.MaxCost, writes)
	}
	// 2000 keys of 10 KB made room for the library's 20 MB.
	if after := ours.DBSize(ctx).Val(); after > keys+int64(writes)-1900 {
		t.Errorf("%d keys before a 20 MB library was loaded at a 32 MB bound, %d after %d more writes", keys, after, writes)
	}
	charged := store.Stats().Cost
	if got := fmtReply(ours.Do(ctx, "FUNCTION", "DELETE", "big")); got != "OK" {
		t.Fatalf("FUNCTION DELETE: %s", got)
	}
	if back := charged - store.Stats().Cost; back < 20e6 {
		t.Errorf("FUNCTION DELETE gave back %d bytes", back)
	}
	if vm := infoInt(t, ours, "memory", "used_memory_vm_functions"); vm != 0 {
		t.Errorf("used_memory_vm_functions with no library: %d", vm)
	}
}

// TestFunctionMemoryBoundedForACLUser: FUNCTION LOAD is not @dangerous in
// Redis, so a user with +@all -@dangerous loads libraries in both
// servers. Here it cannot pass the bounds: a library whose top level
// builds more than the memory limit leaves room for is stopped with the
// OOM error, libraries past --max-scripts-memory are refused, and a
// function that grows its library past it is refused too, while the heap
// stays within them.
func TestFunctionMemoryBoundedForACLUser(t *testing.T) {
	// Go's soft memory limit, as the store sets it at --max-memory 32mb
	// when it owns the process.
	runtime.GC()
	live := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(live)
	base := int64(live[0].Value.Uint64())
	limit := base + 32<<20
	old := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })

	ts := startServer(t, Options{MaxScriptBytes: 6 << 20})
	login := func(addr string) *rawConn {
		admin := dialRaw(t, addr)
		if got := admin.do("ACL", "SETUSER", "app", "on", ">pw", "+@all", "-@dangerous", "~*", "&*"); got != "+OK" {
			t.Fatalf("ACL SETUSER: %s", got)
		}
		r := dialRaw(t, addr)
		if got := r.do("AUTH", "app", "pw"); got != "+OK" {
			t.Fatalf("AUTH: %s", got)
		}
		return r
	}
	small := lib("small", "redis.register_function('small', function() return 1 end)")
	redisUser, user := login(startRedis(t)), login(ts.addr)
	for _, r := range []*rawConn{redisUser, user} {
		if got := r.do("FUNCTION", "LOAD", small); got != `"small"` {
			t.Fatalf("FUNCTION LOAD as a +@all -@dangerous user: %s", got)
		}
	}

	peak := heapPeak()
	start := time.Now()
	// 130 MB if it ran to the end.
	got := user.do("FUNCTION", "LOAD", bigLibrary("huge", 130, 1<<20))
	t.Logf("the load was stopped after %v", time.Since(start))
	if most := peak(); most > limit+16<<20 {
		t.Errorf("the heap reached %d MiB under a limit of %d MiB", most>>20, limit>>20)
	}
	if want := "-" + string(scripting.ErrOutOfMemory); got != want {
		t.Fatalf("FUNCTION LOAD of a library building 130 MB: %s, want %s", got, want)
	}

	// Libraries of 100 functions, about 1.8 MB each, until the 6 MB bound.
	var body strings.Builder
	for i := range 100 {
		fmt.Fprintf(&body, "redis.register_function('f%%d_%d', function(keys, args) return redis.call('GET', keys[1]) end)\n", i)
	}
	loaded := 0
	for i := range 10 {
		code := lib("many"+strconv.Itoa(i), strings.ReplaceAll(body.String(), "%d", strconv.Itoa(i)))
		got := user.do("FUNCTION", "LOAD", code)
		if got == "-"+string(scripting.ErrLibrariesFull) {
			break
		}
		if got != `"many`+strconv.Itoa(i)+`"` {
			t.Fatalf("FUNCTION LOAD many%d: %s", i, got)
		}
		loaded++
	}
	if loaded < 2 || loaded > 3 {
		t.Errorf("%d libraries of 100 functions loaded under a 6 MB bound", loaded)
	}
	for i := range loaded {
		user.do("FUNCTION", "DELETE", "many"+strconv.Itoa(i))
	}

	// A function that keeps 1 MB more at each call.
	if got := user.do("FUNCTION", "LOAD", lib("grow", "local t = {}\n"+
		"redis.register_function('grow', function() t[#t + 1] = ('x'):rep(1048576 - 8) .. #t return #t end)")); got != `"grow"` {
		t.Fatalf("FUNCTION LOAD grow: %s", got)
	}
	calls := 0
	for ; calls < 20; calls++ {
		if got = user.do("FCALL", "grow", "0"); strings.HasPrefix(got, "-") {
			break
		}
	}
	if want := "-" + string(scripting.ErrLibrariesOOM); got != want || calls > 8 {
		t.Fatalf("FCALL grow after %d calls: %s, want %s", calls, got, want)
	}
	if got := user.do("FCALL", "small", "0"); got != ":1" {
		t.Errorf("FCALL of a function without upvalues past the bound: %s", got)
	}
	runtime.GC()
	rtmetrics.Read(live)
	if held := int64(live[0].Value.Uint64()) - base; held > 6<<20+8<<20 {
		t.Errorf("the heap holds %d MiB more than before the loads, under a 6 MiB bound on the libraries", held>>20)
	}
	if got := user.do("FUNCTION", "DELETE", "grow"); got != "+OK" {
		t.Fatalf("FUNCTION DELETE grow: %s", got)
	}
	if got := user.do("FCALL", "small", "0"); got != ":1" {
		t.Errorf("FCALL small after the delete: %s", got)
	}
}

// heapPeak samples the heap's objects every millisecond until the
// returned function is called, which returns the most it saw.
func heapPeak() func() int64 {
	stop, peak := make(chan struct{}), make(chan int64)
	go func() {
		var most int64
		s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			rtmetrics.Read(s)
			most = max(most, int64(s[0].Value.Uint64()))
			select {
			case <-stop:
				peak <- most
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		close(stop)
		return <-peak
	}
}
