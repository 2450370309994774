package bloomkv

import (
	"context"
	"log/slog"
	"time"
)

// EventListener receives the DB's background events: flushes, compactions,
// write stalls, tables and WALs created and deleted, manifests created, and
// background errors and the recoveries from them. Every field may be nil.
//
// The DB calls a callback from the goroutine doing the work, sometimes while
// it holds internal locks: a callback must return quickly and must not call
// methods of the DB. Callbacks may run concurrently, those of one kind too: a
// flush runs beside up to Options.MaxConcurrentCompactions compactions, each
// with its own JobID.
//
// TableDeleted, BlobFileDeleted and WALDeleted are the exception: they are
// called with no lock of the DB held — by Open, for what a crash left, or,
// for the files a running DB makes obsolete and a failed job's outputs, by
// a goroutine of the DB's that deletes them one at a time, some time after
// the flush, compaction or reader's release that retired them. No job
// waits for that goroutine, so they may call the DB's methods, except
// Close, which waits for it to delete what it has left.
type EventListener struct {
	// BackgroundError is called when a flush, a compaction, a WAL write or a
	// manifest update fails; see BackgroundErrorInfo.
	BackgroundError func(BackgroundErrorInfo)
	// Recovered is called when writes resume after a background error that
	// had stopped them (see DB.Resume), and when a failing flush or
	// compaction succeeds again.
	Recovered func(RecoveryInfo)

	// FlushBegin and FlushEnd bracket the flush of one immutable memtable.
	FlushBegin func(FlushInfo)
	FlushEnd   func(FlushInfo)
	// CompactionBegin and CompactionEnd bracket one compaction.
	CompactionBegin func(CompactionInfo)
	CompactionEnd   func(CompactionInfo)

	// WriteStallBegin is called when a write starts waiting for a flush or
	// a compaction; WriteStallEnd when writes flow again.
	WriteStallBegin func(WriteStallBeginInfo)
	WriteStallEnd   func()

	// TableCreated is called when a table file is created, before it is
	// written; TableDeleted when one is removed.
	TableCreated func(TableCreateInfo)
	TableDeleted func(TableDeleteInfo)
	// BlobFileCreated is called when a blob file is created (Reason
	// "flush", "recovery" or "compaction"), before it is written;
	// BlobFileDeleted when one is removed. The infos are a table's.
	BlobFileCreated func(TableCreateInfo)
	BlobFileDeleted func(TableDeleteInfo)
	// WALCreated and WALDeleted report the WAL files.
	WALCreated func(WALCreateInfo)
	WALDeleted func(WALDeleteInfo)
	// ManifestCreated is called when a new manifest becomes the live one,
	// at Open and at every rotation.
	ManifestCreated func(ManifestCreateInfo)
}

// BackgroundErrorInfo describes a failed background operation.
type BackgroundErrorInfo struct {
	// Op is what failed: "flush", "compaction", "WAL" or "manifest".
	Op string
	// Err is the failure; errors.Is(Err, syscall.ENOSPC) for a full disk.
	Err error
	// RetryIn is how long until the DB tries again by itself; zero when it
	// does not: a corruption, or a WAL failure other than a full disk,
	// which waits for DB.Resume.
	RetryIn time.Duration
	// WritesStopped reports that writes fail until the DB recovers.
	WritesStopped bool
}

// RecoveryInfo describes a recovery from a background error.
type RecoveryInfo struct {
	Op  string // as in BackgroundErrorInfo
	Err error  // the error recovered from
}

// FlushInfo describes one flush.
type FlushInfo struct {
	JobID int
	// Output is the table written; a zero FileNum for an empty memtable.
	Output   TableInfo
	Duration time.Duration // FlushEnd only
	Err      error         // FlushEnd only: why it failed
}

// CompactionInfo describes one compaction.
type CompactionInfo struct {
	JobID       int
	Level       int         // the level compacted
	OutputLevel int         // the level written
	Inputs      []TableInfo // the input tables of both levels
	Outputs     []TableInfo // CompactionEnd only
	// TrivialMove reports a table moved down a level unchanged.
	TrivialMove bool
	Duration    time.Duration // CompactionEnd only
	Err         error         // CompactionEnd only: why it failed
}

// TableInfo describes a table.
type TableInfo struct {
	FileNum uint64
	Level   int
	Size    uint64
	// Smallest and Largest are the table's smallest and largest user keys.
	Smallest, Largest []byte
}

// WriteStallBeginInfo says why writes wait.
type WriteStallBeginInfo struct {
	// Reason is "memtables full" (MaxImmutableMemtables wait for their
	// flush) or "L0 stop trigger" (L0 holds L0StopTrigger tables).
	Reason string
}

// TableCreateInfo describes a table file created.
type TableCreateInfo struct {
	JobID int
	// Reason is "flush", "compaction" or "recovery" (a WAL replayed at Open).
	Reason  string
	Path    string
	FileNum uint64
}

// TableDeleteInfo describes a table file removed.
type TableDeleteInfo struct {
	JobID   int
	Path    string
	FileNum uint64
	Err     error // why the removal failed, if it did
}

// WALCreateInfo describes a WAL file created.
type WALCreateInfo struct {
	Path    string
	FileNum uint64
}

// WALDeleteInfo describes a WAL file removed.
type WALDeleteInfo struct {
	Path    string
	FileNum uint64
	Err     error
}

// ManifestCreateInfo describes a manifest that became the live one.
type ManifestCreateInfo struct {
	Path    string
	FileNum uint64
}

// events delivers the DB's events to Options.EventListener and logs them on
// Options.Logger: background errors at Error, stalls at Warn, flushes,
// compactions and recoveries at Info, files at Debug.
type events struct {
	l   EventListener
	log *slog.Logger
}

func newEvents(l *EventListener, log *slog.Logger) *events {
	e := &events{log: log}
	if l != nil {
		e.l = *l
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e
}

// enabled reports whether logging at level would print: the attributes of
// a debug line are not built for a logger that drops it.
func (e *events) enabled(level slog.Level) bool {
	return e.log.Enabled(context.Background(), level)
}

// call calls f with info, unless f is nil: an EventListener field left
// unset.
func call[T any](f func(T), info T) {
	if f != nil {
		f(info)
	}
}

func (e *events) backgroundError(info BackgroundErrorInfo) {
	e.log.Error("bloomkv: background error", "op", info.Op, "err", info.Err,
		"retry_in", info.RetryIn, "writes_stopped", info.WritesStopped)
	call(e.l.BackgroundError, info)
}

func (e *events) recovered(info RecoveryInfo) {
	e.log.Info("bloomkv: recovered from a background error", "op", info.Op, "err", info.Err)
	call(e.l.Recovered, info)
}

func (e *events) flushBegin(info FlushInfo) {
	call(e.l.FlushBegin, info)
}

func (e *events) flushEnd(info FlushInfo) {
	if e.enabled(slog.LevelInfo) {
		e.log.Info("bloomkv: flushed", "job", info.JobID, "table", info.Output.FileNum,
			"bytes", info.Output.Size, "duration", info.Duration, "err", info.Err)
	}
	call(e.l.FlushEnd, info)
}

func (e *events) compactionBegin(info CompactionInfo) {
	call(e.l.CompactionBegin, info)
}

func (e *events) compactionEnd(info CompactionInfo) {
	if e.enabled(slog.LevelInfo) {
		e.log.Info("bloomkv: compacted", "job", info.JobID, "from", info.Level, "to", info.OutputLevel,
			"inputs", len(info.Inputs), "outputs", len(info.Outputs), "trivial_move", info.TrivialMove,
			"duration", info.Duration, "err", info.Err)
	}
	call(e.l.CompactionEnd, info)
}

func (e *events) writeStallBegin(info WriteStallBeginInfo) {
	e.log.Warn("bloomkv: write stall", "reason", info.Reason)
	call(e.l.WriteStallBegin, info)
}

func (e *events) writeStallEnd() {
	e.log.Info("bloomkv: write stall ended")
	if e.l.WriteStallEnd != nil {
		e.l.WriteStallEnd()
	}
}

func (e *events) tableCreated(info TableCreateInfo) { e.fileCreated("table", e.l.TableCreated, info) }
func (e *events) tableDeleted(info TableDeleteInfo) { e.fileDeleted("table", e.l.TableDeleted, info) }
func (e *events) blobCreated(info TableCreateInfo) {
	e.fileCreated("blob file", e.l.BlobFileCreated, info)
}
func (e *events) blobDeleted(info TableDeleteInfo) {
	e.fileDeleted("blob file", e.l.BlobFileDeleted, info)
}

// fileCreated logs and reports the creation of a table or blob file
// (what), to fn.
func (e *events) fileCreated(what string, fn func(TableCreateInfo), info TableCreateInfo) {
	if e.enabled(slog.LevelDebug) {
		e.log.Debug("bloomkv: "+what+" created", "job", info.JobID, "reason", info.Reason, "path", info.Path)
	}
	call(fn, info)
}

// fileDeleted logs and reports the removal of a table or blob file
// (what), to fn.
func (e *events) fileDeleted(what string, fn func(TableDeleteInfo), info TableDeleteInfo) {
	if e.enabled(slog.LevelDebug) {
		e.log.Debug("bloomkv: "+what+" deleted", "job", info.JobID, "path", info.Path, "err", info.Err)
	}
	call(fn, info)
}

func (e *events) walCreated(info WALCreateInfo) {
	if e.enabled(slog.LevelDebug) {
		e.log.Debug("bloomkv: WAL created", "path", info.Path)
	}
	call(e.l.WALCreated, info)
}

func (e *events) walDeleted(info WALDeleteInfo) {
	if e.enabled(slog.LevelDebug) {
		e.log.Debug("bloomkv: WAL deleted", "path", info.Path, "err", info.Err)
	}
	call(e.l.WALDeleted, info)
}

func (e *events) manifestCreated(info ManifestCreateInfo) {
	if e.enabled(slog.LevelInfo) {
		e.log.Info("bloomkv: manifest created", "path", info.Path)
	}
	call(e.l.ManifestCreated, info)
}
