package record_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/bloomkv/bloomkv/record"
)

func Example() {
	// Write four records. Given a file, which has a Sync method, w.Sync
	// would make them durable; a bytes.Buffer can only be flushed to.
	var file bytes.Buffer
	w := record.NewWriter(&file)
	for _, rec := range []string{"put apple=red", "", "delete pear", "put plum=purple"} {
		off, err := w.WriteRecord([]byte(rec))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("wrote %q at offset %d\n", rec, off)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}

	// A crash while the last record was reaching the disk cuts it short.
	torn := file.Bytes()[:file.Len()-6]

	r := record.NewReader(bytes.NewReader(torn), "000001.log")
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err) // errors.Is(err, base.ErrCorruption): damage mid-log
		}
		fmt.Printf("read %q at offset %d\n", rec, r.Offset())
	}
	if off, ok := r.TornTail(); ok {
		fmt.Printf("torn tail: %d bytes after offset %d ignored\n", len(torn)-int(off), off)
	}
	// Output:
	// wrote "put apple=red" at offset 0
	// wrote "" at offset 20
	// wrote "delete pear" at offset 27
	// wrote "put plum=purple" at offset 45
	// read "put apple=red" at offset 0
	// read "" at offset 20
	// read "delete pear" at offset 27
	// torn tail: 16 bytes after offset 45 ignored
}

func ExampleNewBackgroundWriter() {
	// A log whose full blocks are written by a goroutine of the Writer's:
	// the record that fills a block does not wait for the file system.
	var file bytes.Buffer
	w := record.NewBackgroundWriter(&file)
	rec := bytes.Repeat([]byte("x"), 10000)
	for range 10 { // about three blocks
		if _, err := w.WriteRecord(rec); err != nil {
			log.Fatal(err)
		}
	}
	// Flush waits for the full blocks' writes, then writes the rest; Sync
	// would then make the log durable. Drain alone waits for the full
	// blocks: call it, or Flush or Sync, before closing the file.
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(int64(file.Len()) == w.Size(), w.Size())
	// Output:
	// true 100091
}
