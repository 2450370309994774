package manifest

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
)

// State is everything a manifest records: the current version and the
// counters. The zero State is that of an empty database.
type State struct {
	// Version is the tree; nil means empty.
	Version *Version
	// LogNumber is the number of the oldest WAL still needed; WALs
	// numbered below it are obsolete.
	LogNumber uint64
	// NextFileNumber is the next file number to allocate.
	NextFileNumber uint64
	// LastSeqNum is the largest sequence number recorded by the manifest.
	// Writes in WALs at or after LogNumber may go further.
	LastSeqNum base.SeqNum
	// MergerName is the DB's merge operator's name; empty until an edit
	// records one.
	MergerName string
}

// Apply returns the state after edits, in order, or an error saying why one
// of them does not apply; s itself is never changed. Besides the Builder's
// checks of the tables, it checks the counters: none goes back; every file
// number in use — each table added and the log number — is below the next
// file number, so that a number is never handed out twice; and every table
// added holds only seqnums up to the last seqnum, so that one is never
// assigned twice. An edit that adds tables therefore sets NextFileNumber and
// LastSeqNum too, unless earlier edits already cover its tables.
func (s State) Apply(edits ...*VersionEdit) (State, error) {
	r := newReplay(s)
	for i, e := range edits {
		if err := r.apply(e); err != nil {
			if len(edits) > 1 {
				err = fmt.Errorf("edit %d: %w", i, err)
			}
			return s, err
		}
	}
	next, err := r.finish()
	if err != nil {
		return s, err
	}
	return next, nil
}

// SnapshotEdit returns an edit that, applied to the empty state, gives s:
// the first record of a new manifest (see Create). Its tables are s's own
// metadata, which the edit must not modify.
func (s State) SnapshotEdit() *VersionEdit {
	e := &VersionEdit{LogNumber: s.LogNumber, NextFileNumber: s.NextFileNumber, LastSeqNum: s.LastSeqNum, MergerName: s.MergerName}
	if s.Version != nil {
		for _, b := range s.Version.Blobs {
			e.NewBlobFiles = append(e.NewBlobFiles, b.BlobFileMetadata)
		}
		for level, f := range s.Version.Files() {
			e.NewFiles = append(e.NewFiles, NewFile{Level: level, Meta: f})
		}
	}
	return e
}

// replay applies edits to a state: the counters directly, the tables through
// one Builder, so that Recover checks each record as it reads it and builds
// the version once.
type replay struct {
	s State
	b *Builder
}

func newReplay(s State) *replay {
	return &replay{s: s, b: NewBuilder(s.Version)}
}

func (r *replay) apply(e *VersionEdit) error {
	s := &r.s
	if e.LogNumber != 0 {
		if e.LogNumber < s.LogNumber {
			return fmt.Errorf("manifest: edit moves the log number back from %d to %d", s.LogNumber, e.LogNumber)
		}
		s.LogNumber = e.LogNumber
	}
	if e.NextFileNumber != 0 {
		if e.NextFileNumber < s.NextFileNumber {
			return fmt.Errorf("manifest: edit moves the next file number back from %d to %d", s.NextFileNumber, e.NextFileNumber)
		}
		s.NextFileNumber = e.NextFileNumber
	}
	if e.LastSeqNum != 0 {
		if e.LastSeqNum < s.LastSeqNum {
			return fmt.Errorf("manifest: edit moves the last seqnum back from %d to %d", s.LastSeqNum, e.LastSeqNum)
		}
		if e.LastSeqNum > base.SeqNumMax {
			return fmt.Errorf("manifest: edit sets the last seqnum to %d, above the maximum %d", e.LastSeqNum, base.SeqNumMax)
		}
		s.LastSeqNum = e.LastSeqNum
	}
	if e.MergerName != "" {
		if s.MergerName != "" && s.MergerName != e.MergerName {
			return fmt.Errorf("manifest: edit records merger %q, but the DB's is %q", e.MergerName, s.MergerName)
		}
		s.MergerName = e.MergerName
	}
	if s.LogNumber != 0 && s.LogNumber >= s.NextFileNumber {
		return fmt.Errorf("manifest: log number %d is not below the next file number %d", s.LogNumber, s.NextFileNumber)
	}
	for _, b := range e.NewBlobFiles {
		if b.FileNum >= s.NextFileNumber {
			return fmt.Errorf("manifest: edit adds blob file %06d, not below the next file number %d", b.FileNum, s.NextFileNumber)
		}
	}
	for _, n := range e.NewFiles {
		if n.Meta == nil {
			continue // the Builder reports it
		}
		if n.Meta.FileNum >= s.NextFileNumber {
			return fmt.Errorf("manifest: edit adds table %06d, not below the next file number %d", n.Meta.FileNum, s.NextFileNumber)
		}
		// Otherwise a reopened DB would hand out seqnums the table already
		// holds, and new writes would sort as older than old ones.
		if n.Meta.LargestSeqNum > s.LastSeqNum {
			return fmt.Errorf("manifest: edit adds table %06d holding seqnums up to %d, above the last seqnum %d",
				n.Meta.FileNum, n.Meta.LargestSeqNum, s.LastSeqNum)
		}
	}
	return r.b.Apply(e)
}

func (r *replay) finish() (State, error) {
	v, err := r.b.Finish()
	if err != nil {
		return State{}, err
	}
	r.s.Version = v
	return r.s, nil
}
