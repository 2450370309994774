package sstable

import (
	"bytes"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestExpiryProperties checks the properties of a table's entries with an
// expiry — their count and the earliest expiry, which a table without
// such entries does not store at all — against the entries written, and
// that a Get returns such an entry whole, with its kind.
func TestExpiryProperties(t *testing.T) {
	ttl := func(k string, seq SeqNum, kind Kind, expiry int64, rest string) entry {
		return entry{base.MakeInternalKey([]byte(k), seq, kind), append(AppendExpiry(nil, expiry), rest...)}
	}
	with := []entry{
		ttl("a", 9, KindSetTTL, 500, "v"),
		{base.MakeInternalKey([]byte("b"), 8, KindSet), []byte("plain")},
		ttl("c", 7, KindSetBlobTTL, -20, "\x01\x02\x03"), // before 1970: still the earliest
		ttl("d", 6, KindSetTTL, 1000, ""),
	}
	r := openTable(t, buildTable(t, with, WriterOptions{}), nil)
	if p := r.Properties(); p.ExpiringEntries != 3 || p.EarliestExpiry != -20 {
		t.Errorf("ExpiringEntries %d, EarliestExpiry %d; want 3, -20", p.ExpiringEntries, p.EarliestExpiry)
	}
	value, kind, found, err := r.Get(MakeLookupKey([]byte("a"), SeqNumMax), nil)
	if err != nil || !found || kind != KindSetTTL || !bytes.Equal(value, with[0].value) {
		t.Errorf("Get(a) = %q, %v, %v, %v; want the entry whole, KindSetTTL", value, kind, found, err)
	}
	without := buildTable(t, with[1:2], WriterOptions{})
	if p := openTable(t, without, nil).Properties(); p.ExpiringEntries != 0 || p.EarliestExpiry != 0 {
		t.Errorf("a table without expiring entries: ExpiringEntries %d, EarliestExpiry %d", p.ExpiringEntries, p.EarliestExpiry)
	}
	if bytes.Contains(without, []byte("bloomkv.expir")) {
		t.Error("a table without expiring entries stores their properties")
	}
}
