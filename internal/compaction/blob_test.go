package compaction

import (
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// TestPickBlobRewrite builds versions whose blob file is half dead and
// checks what the picker does: a rewrite into its own level of a table
// below L0 that references the file, relocating it; nothing while that
// table is busy, while only L0 references the file, or with reclaiming
// off; and every compaction it picks carries the file in RelocateBlobs.
func TestPickBlobRewrite(t *testing.T) {
	opts := &Options{L0CompactionTrigger: 4, BaseLevelSize: 16 << 20, LevelMultiplier: 10, TargetFileSize: 2 << 20,
		BitsPerKey: 10, MaxConcurrentCompactions: 2, BlobDeadShare: 0.2}
	blob := func(num, valueBytes uint64) *manifest.BlobFileMetadata {
		return &manifest.BlobFileMetadata{FileNum: num, Size: valueBytes + 100, Values: 10, ValueBytes: valueBytes}
	}
	withRefs := func(m *manifest.FileMetadata, refs ...manifest.BlobRef) *manifest.FileMetadata {
		m.BlobRefs = refs
		return m
	}
	build := func(blobs []*manifest.BlobFileMetadata, levels map[int][]*manifest.FileMetadata) *manifest.Version {
		e := &manifest.VersionEdit{NewBlobFiles: blobs}
		for level, files := range levels {
			for _, f := range files {
				e.NewFiles = append(e.NewFiles, manifest.NewFile{Level: level, Meta: f})
			}
		}
		b := manifest.NewBuilder(nil)
		if err := b.Apply(e); err != nil {
			t.Fatal(err)
		}
		v, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// Blob file 5 is half dead, referenced by an L6 table and an L0
	// one; blob file 6 is all live.
	l6 := withRefs(meta(10, "a", "m", 1, 5, 1000), manifest.BlobRef{FileNum: 5, Bytes: 300}, manifest.BlobRef{FileNum: 6, Bytes: 1000})
	l0 := withRefs(meta(11, "b", "c", 6, 7, 1000), manifest.BlobRef{FileNum: 5, Bytes: 200})
	v := build([]*manifest.BlobFileMetadata{blob(5, 1000), blob(6, 1000)}, map[int][]*manifest.FileMetadata{0: {l0}, 6: {l6}})
	if !BlobRewriteDue(v, opts) {
		t.Fatal("a half-dead blob file referenced from L6: no rewrite due")
	}
	c := Pick(v, opts, nil)
	if c == nil || !c.BlobRewrite || c.Level != 6 || c.OutputLevel != 6 || len(c.Inputs[0]) != 1 || c.Inputs[0][0].FileNum != l6.FileNum ||
		len(c.Inputs[1]) != 0 || c.IsTrivialMove() || !c.RelocateBlobs[5] || c.RelocateBlobs[6] || !c.Bottommost {
		t.Fatalf("Pick = %v (relocating %v), want a rewrite of 000010 in L6 relocating blob file 5", c, c.RelocateBlobs)
	}
	if c := Pick(v, opts, []*Compaction{c}); c != nil {
		t.Fatalf("with the rewrite running, Pick = %v, want nil", c)
	}
	off := *opts
	off.BlobDeadShare = 0
	if BlobRewriteDue(v, &off) || Pick(v, &off, nil) != nil {
		t.Fatal("reclaiming off, but a rewrite is picked")
	}

	// Referenced from L0 alone, the file waits for L0's compaction.
	v = build([]*manifest.BlobFileMetadata{blob(5, 1000)}, map[int][]*manifest.FileMetadata{0: {l0}})
	if BlobRewriteDue(v, opts) || Pick(v, opts, nil) != nil {
		t.Fatal("a blob file only L0 references: a rewrite is picked")
	}

	// A compaction the levels call for relocates the file's values too.
	manyL0 := []*manifest.FileMetadata{l0}
	for i := range 4 {
		manyL0 = append(manyL0, meta(uint64(20+i), "x", "y", base.SeqNum(10+2*i), base.SeqNum(11+2*i), 1000))
	}
	v = build([]*manifest.BlobFileMetadata{blob(5, 1000)}, map[int][]*manifest.FileMetadata{0: manyL0})
	if c := Pick(v, opts, nil); c == nil || c.BlobRewrite || c.Level != 0 || !c.RelocateBlobs[5] {
		t.Fatalf("Pick = %v, want L0's compaction relocating blob file 5", c)
	}
}
