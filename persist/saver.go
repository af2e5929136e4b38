package persist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// SavePoint is one of Redis's save points: save when at least Changes
// changes happened within the last Seconds seconds.
type SavePoint struct {
	Seconds int64
	Changes int64
}

// ParseSavePoints reads Redis's save parameter: "seconds changes" pairs
// separated by spaces, or "" for none.
func ParseSavePoints(s string) ([]SavePoint, error) {
	f := strings.Fields(s)
	if len(f)%2 != 0 {
		return nil, errors.New("Invalid save parameters")
	}
	var out []SavePoint
	for i := 0; i < len(f); i += 2 {
		sec, err1 := strconv.ParseInt(f[i], 10, 64)
		ch, err2 := strconv.ParseInt(f[i+1], 10, 64)
		if err1 != nil || err2 != nil || sec < 1 || ch < 0 {
			return nil, errors.New("Invalid save parameters")
		}
		out = append(out, SavePoint{Seconds: sec, Changes: ch})
	}
	return out, nil
}

// FormatSavePoints is CONFIG GET save's form of points.
func FormatSavePoints(points []SavePoint) string {
	var b strings.Builder
	for i, p := range points {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d %d", p.Seconds, p.Changes)
	}
	return b.String()
}

// Errors of SAVE and BGSAVE, in Redis's words where Redis has them.
var (
	ErrInProgress = errors.New("Background save already in progress")
	ErrOff        = errors.New("snapshots are off: start the server with --dir to save")
)

// Saver runs the saves of one store into one file: SAVE, BGSAVE, the
// periodic save points, and the save at shutdown. Its zero path means
// saving is off: nothing is ever written.
type Saver struct {
	st   *engine.Store
	rt   ReadThrough // nil: the store's keys alone
	path string
	log  *slog.Logger
	now  func() time.Time

	mu         sync.Mutex // guards the fields below
	points     []SavePoint
	saving     bool          // a save (foreground or background) is running
	done       chan struct{} // closed when the running save ends
	scheduled  bool          // BGSAVE SCHEDULE asked for one more
	startedAt  time.Time     // the running save's start
	lastSave   time.Time     // the last successful save's start, or when the Saver was made
	lastTry    time.Time     // the last save's start, successful or not
	lastOK     bool          // the last background save succeeded
	lastDur    time.Duration // the last background save's duration
	saves      int
	dirtyAt    uint64 // st.Changes() when the last successful save began
	noFinal    bool   // SHUTDOWN NOSAVE: no save at exit
	lastLoaded LoadResult
}

// NewSaver saves st to path ("" for never) at the given save points.
func NewSaver(st *engine.Store, path string, points []SavePoint, log *slog.Logger) *Saver {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := time.Now()
	return &Saver{st: st, path: path, log: log, now: time.Now, points: points, lastSave: now, lastOK: true, dirtyAt: st.Changes()}
}

// SetReadThrough makes the saves and the load keep rt's state beside the
// keys. It must be called before Load and any save.
func (s *Saver) SetReadThrough(rt ReadThrough) { s.rt = rt }

// Enabled reports whether saves are written at all (--dir was given).
func (s *Saver) Enabled() bool { return s.path != "" }

// Path is the file saves write and the start loads.
func (s *Saver) Path() string { return s.path }

// SavePoints and SetSavePoints are CONFIG GET and SET save.
func (s *Saver) SavePoints() []SavePoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.points
}

func (s *Saver) SetSavePoints(p []SavePoint) {
	s.mu.Lock()
	s.points = p
	s.mu.Unlock()
}

// begin claims the right to save, or says why not.
func (s *Saver) begin() error {
	if !s.Enabled() {
		return ErrOff
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saving {
		return ErrInProgress
	}
	s.saving, s.done, s.startedAt = true, make(chan struct{}), s.now()
	return nil
}

// run saves and records the outcome; begin must have succeeded.
func (s *Saver) run(background bool) error {
	start := s.now()
	dirty := s.st.Changes()
	res, err := save(s.st, s.rt, s.path, start, background)
	dur := s.now().Sub(start)
	s.mu.Lock()
	s.lastTry = start
	if err == nil {
		s.lastSave, s.dirtyAt = start, dirty
		s.saves++
	}
	if background {
		s.lastOK, s.lastDur = err == nil, dur
	}
	s.saving = false
	close(s.done)
	again := s.scheduled
	s.scheduled = false
	s.mu.Unlock()
	if err != nil {
		s.log.Error("snapshot failed; the previous one is intact", "path", s.path, "err", err)
	} else {
		s.log.Info("snapshot saved", "path", s.path, "keys", res.Keys, "bytes", res.Bytes, "took", dur)
	}
	if again {
		s.Background(false)
	}
	return err
}

// Save is SAVE: a save on the caller's goroutine (the server keeps
// serving other clients meanwhile).
func (s *Saver) Save() error {
	if err := s.begin(); err != nil {
		return err
	}
	return s.run(false)
}

// Background is BGSAVE: a save on its own goroutine. With schedule, a
// save already running makes this one follow it (BGSAVE SCHEDULE);
// scheduled reports that.
func (s *Saver) Background(schedule bool) (scheduled bool, err error) {
	if err := s.begin(); err != nil {
		if errors.Is(err, ErrInProgress) && schedule {
			s.mu.Lock()
			s.scheduled = true
			s.mu.Unlock()
			return true, nil
		}
		return false, err
	}
	go s.run(true)
	return false, nil
}

// Wait returns once no save is running (for shutdown and tests).
func (s *Saver) Wait() {
	for {
		s.mu.Lock()
		saving, done := s.saving, s.done
		s.mu.Unlock()
		if !saving {
			return
		}
		<-done
	}
}

// LastSave is LASTSAVE: the start of the last successful save.
func (s *Saver) LastSave() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSave
}

// SkipFinalSave is SHUTDOWN NOSAVE: Final will not save.
func (s *Saver) SkipFinalSave() {
	s.mu.Lock()
	s.noFinal = true
	s.mu.Unlock()
}

// Final is the save at exit (SIGTERM, SHUTDOWN): after any running save
// ends, a save if saving is on, not skipped, and something changed since
// the last one.
func (s *Saver) Final() error {
	s.Wait()
	s.mu.Lock()
	skip := s.noFinal || s.st.Changes() == s.dirtyAt
	s.mu.Unlock()
	if !s.Enabled() || skip {
		return nil
	}
	return s.Save()
}

// Run starts a background save whenever a save point is reached, until
// ctx ends, as Redis's serverCron does once a second; after a failed
// save it waits 5 seconds before trying again (CONFIG_BGSAVE_RETRY_DELAY).
func (s *Saver) Run(ctx context.Context) {
	if !s.Enabled() {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if s.due() {
			s.Background(false)
		}
	}
}

func (s *Saver) due() bool {
	now := s.now()
	changes := s.st.Changes()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.saving || !s.lastOK && now.Sub(s.lastTry) < 5*time.Second {
		return false
	}
	for _, p := range s.points {
		if int64(changes-s.dirtyAt) >= p.Changes && now.Sub(s.lastSave) >= time.Duration(p.Seconds)*time.Second {
			return true
		}
	}
	return false
}

// Info is INFO persistence's view of the saves.
type Info struct {
	ChangesSinceSave uint64
	InProgress       bool
	LastSave         time.Time
	LastOK           bool
	LastDuration     time.Duration // -1 before the first background save
	CurrentDuration  time.Duration // -1 with none running
	Saves            int
	Loaded           LoadResult
}

func (s *Saver) Info() Info {
	changes := s.st.Changes()
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	in := Info{ChangesSinceSave: changes - s.dirtyAt, InProgress: s.saving, LastSave: s.lastSave, LastOK: s.lastOK,
		LastDuration: -1, CurrentDuration: -1, Saves: s.saves, Loaded: s.lastLoaded}
	if s.lastTry != (time.Time{}) {
		in.LastDuration = s.lastDur
	}
	if s.saving {
		in.CurrentDuration = now.Sub(s.startedAt)
	}
	return in
}

// Load loads the Saver's file into its store at start, if saving is on
// and the file exists: see the package's Load. Changes made by the load
// do not count as changes since the last save.
func (s *Saver) Load(opts LoadOptions) (LoadResult, error) {
	if !s.Enabled() {
		return LoadResult{}, nil
	}
	if opts.ReadThrough == nil {
		opts.ReadThrough = s.rt
	}
	res, err := Load(s.st, s.path, s.now(), opts)
	s.mu.Lock()
	s.lastLoaded, s.dirtyAt = res, s.st.Changes()
	s.mu.Unlock()
	return res, err
}
