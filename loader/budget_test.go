package loader

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBudgetZeroValue(t *testing.T) {
	var b Budget
	if b.Limit() != DefaultMaxConcurrentFills {
		t.Errorf("zero Budget Limit() = %d, want %d", b.Limit(), DefaultMaxConcurrentFills)
	}
	if NewBudget(-1).Limit() != DefaultMaxConcurrentFills {
		t.Errorf("NewBudget(-1).Limit() is not the default")
	}
}

func TestBudgetAcquireRelease(t *testing.T) {
	b := NewBudget(2)
	ctx := longCtx(t)
	for range 2 {
		if err := b.Acquire(ctx); err != nil {
			t.Fatalf("Acquire: %v", err)
		}
	}
	if got := b.InUse(); got != 2 {
		t.Fatalf("InUse() = %d, want 2", got)
	}
	if b.TryAcquire() {
		t.Fatal("TryAcquire succeeded on a full budget")
	}

	// A full budget makes Acquire wait within its ctx, and no longer.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := b.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a full budget = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Acquire waited %v past its ctx", d)
	}

	// A waiter gets the slot as soon as one is released.
	got := make(chan error, 1)
	go func() { got <- b.Acquire(ctx) }()
	b.Release()
	if err := <-got; err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	b.Release()
	b.Release()
	if got := b.InUse(); got != 0 {
		t.Fatalf("InUse() = %d after releasing all, want 0", got)
	}

	// An expired ctx never takes a slot, even a free one.
	if err := b.Acquire(short); err == nil {
		t.Error("Acquire with an expired ctx took a slot")
		b.Release()
	}
	if !b.TryAcquire() {
		t.Error("TryAcquire failed on an empty budget")
	}
}

func TestBudgetReleaseWithoutAcquirePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Release without Acquire did not panic")
		}
	}()
	NewBudget(1).Release()
}
