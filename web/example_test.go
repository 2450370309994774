package web_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/vfs"
	"github.com/bloomkv/bloomkv/web"
)

func ExampleHandler() {
	// The EventLog must be in place before Open, so that the tree page
	// lists each flush and compaction.
	events := web.NewEventLog(0)
	db, err := bloomkv.Open("db", &bloomkv.Options{FS: vfs.NewMem(), EventListener: events.Listener(nil)})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	// Mount the pages beside the application's other handlers, as
	// net/http/pprof is mounted; they only read the DB.
	mux := http.NewServeMux()
	mux.Handle("/debug/bloomkv/", http.StripPrefix("/debug/bloomkv", web.Handler(db, &web.Options{Events: events})))
	// http.ListenAndServe("127.0.0.1:8080", mux)

	db.Put([]byte("apple"), []byte("red"), nil)
	db.Flush()
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/debug/bloomkv/api/tree", nil))
	var tree struct {
		Flushes uint64
		Events  []web.Event
	}
	json.Unmarshal(rec.Body.Bytes(), &tree)
	fmt.Println(rec.Code, tree.Flushes, "flush:", tree.Events[0].Kind, "into L0")
	// Output: 200 1 flush: flush into L0
}

func ExampleFilterHandler() {
	// The playground and the calculator need no DB.
	mux := http.NewServeMux()
	mux.Handle("/filters/", http.StripPrefix("/filters", web.FilterHandler()))

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/filters/api/calc?n=1000&p=0.01", nil))
	var c struct{ Classic struct{ M, K int } }
	json.Unmarshal(rec.Body.Bytes(), &c)
	fmt.Println(rec.Code, c.Classic.M, "bits,", c.Classic.K, "probes")
	// Output: 200 9586 bits, 7 probes
}
