package manifest_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

func Example() {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/db"); err != nil {
		log.Fatal(err)
	}

	// Open finds no database and creates one: MANIFEST-000001, whose
	// snapshot says the next file number is 3 (000002.log is the WAL).
	if _, err := manifest.Recover(fs, "/db"); errors.Is(err, manifest.ErrNoManifest) {
		fmt.Println("no database yet")
	}
	ml, err := manifest.Create(fs, "/db", 1, &manifest.VersionEdit{LogNumber: 2, NextFileNumber: 3})
	if err != nil {
		log.Fatal(err)
	}

	// A flush writes 000003.sst from WAL 000002.log, whose writes had
	// seqnums 1-40, and retires the WAL in favor of 000004.log.
	flush := &manifest.VersionEdit{
		LogNumber:      4,
		NextFileNumber: 5,
		LastSeqNum:     40,
		NewFiles: []manifest.NewFile{{Level: 0, Meta: &manifest.FileMetadata{
			FileNum:          3,
			Size:             4096,
			Smallest:         base.MakeInternalKey([]byte("apple"), 40, base.KindSet),
			Largest:          base.MakeInternalKey([]byte("plum"), 7, base.KindDelete),
			SmallestSeqNum:   1,
			LargestSeqNum:    40,
			FilterBitsPerKey: 10,
		}}},
	}
	if _, err := ml.Append(flush); err != nil {
		log.Fatal(err) // the manifest is broken: the DB refuses writes
	}
	ml.Close()

	// After a restart, recovery rebuilds the same state.
	rec, err := manifest.Recover(fs, "/db")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("manifest %d: %d edits, log number %d, next file %d, last seqnum %d\n",
		rec.ManifestFileNum, rec.Edits, rec.LogNumber, rec.NextFileNumber, rec.LastSeqNum)
	fmt.Print(rec.Version)
	for name := range rec.Version.FileNums() {
		fmt.Println("live:", manifest.MakeFilename(manifest.FileTypeTable, name))
	}
	// Output:
	// no database yet
	// manifest 1: 2 edits, log number 4, next file 5, last seqnum 40
	// L0:
	//   000003:["apple"#40,SET-"plum"#7,DEL] seqs 1-40 size 4096 bits/key 10
	// live: 000003.sst
}
