package scripting

import (
	"context"
	"testing"
)

// BenchmarkFCall is FCALL of small functions: one without upvalues, whose
// calls cannot change what its library holds, and one with, whose calls
// are counted (FCall's allocation count); without a memory limit, and
// with one, as a bounded server has (the memory watch then runs).
func BenchmarkFCall(b *testing.B) {
	b.Run("nolimit", func(b *testing.B) { benchmarkFCall(b, Options{}) })
	b.Run("limit", func(b *testing.B) {
		benchmarkFCall(b, Options{MemoryLimit: func() int64 { return 1 << 40 }})
	})
}

func benchmarkFCall(b *testing.B, o Options) {
	e := New(o)
	ctx := context.Background()
	code := "#!lua name=bench\nlocal n = 0\n" +
		"redis.register_function('plain', function(keys, args) return #args end)\n" +
		"redis.register_function('counter', function(keys, args) n = n + 1 return n end)"
	if r, err := e.FunctionLoad(ctx, []byte(code), false); err != nil || string(r) != "$5\r\nbench\r\n" {
		b.Fatalf("FUNCTION LOAD: %q %v", r, err)
	}
	for _, name := range []string{"plain", "counter"} {
		b.Run(name, func(b *testing.B) {
			args := [][]byte{[]byte(name), []byte("0"), []byte("a")}
			for b.Loop() {
				if _, err := e.FCall(ctx, FCallInvocation{Args: args}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
