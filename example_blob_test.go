package bloomkv_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/bloomkv/bloomkv"
)

// Values from ValueSeparation.MinSize bytes go to blob files; the tables
// keep handles. Overwriting them leaves dead values, which compactions
// reclaim by themselves once a file's dead share reaches DeadShare. A
// blob file stores a value compressed (the DB's Compression, snappy by
// default) when that saves an eighth of it, and its bytes and reads count
// the stored bytes: the 4,096 bytes of photo take 211.
func ExampleValueSeparation() {
	dir := tempDir()
	defer os.RemoveAll(dir)
	db, err := bloomkv.Open(dir, &bloomkv.Options{ValueSeparation: bloomkv.ValueSeparation{MinSize: 512}})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	db.Put([]byte("small"), []byte("inline"), nil)
	db.Put([]byte("photo"), bytes.Repeat([]byte{0xff}, 4096), nil)
	db.Flush()

	blobs, _ := db.BlobFiles()
	v, _ := db.Get([]byte("photo"))
	fmt.Printf("%d blob file, %d live bytes; photo is %d bytes\n", len(blobs), blobs[0].LiveBytes, len(v))
	tr, _ := db.Explain([]byte("photo"))
	last := tr.Steps[len(tr.Steps)-1]
	fmt.Println(last.Kind == bloomkv.BlobStep, last.BytesRead)
	// Output:
	// 1 blob file, 211 live bytes; photo is 4096 bytes
	// true 218
}
