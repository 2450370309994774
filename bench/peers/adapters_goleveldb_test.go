//go:build !peers_single || peers_goleveldb

package peers

import "testing"

// TestParseLeveldbTables parses goleveldb's leveldb.sstables property,
// keys quoted with %q whatever bytes they hold.
func TestParseLeveldbTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []Level // nil: an error
	}{
		{"empty DB", "--- level 0 ---\n", []Level{{}}},
		{"two levels", "--- level 0 ---\n12:4096[\"a\\x01\\x00\" .. \"b:[c\\n\"]\n13:100[\"c\" .. \"d\"]\n--- level 1 ---\n--- level 2 ---\n7:2000000[\"0\" .. \"9\"]\n",
			[]Level{{2, 4196}, {0, 0}, {1, 2000000}}},
		{"table before a level", "12:4096[\"a\" .. \"b\"]\n", nil},
		{"levels out of order", "--- level 0 ---\n--- level 2 ---\n", nil},
		{"size not a number", "--- level 0 ---\n12:x[\"a\" .. \"b\"]\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLeveldbTables(tc.in)
			if tc.want == nil {
				if err == nil {
					t.Errorf("no error: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Levels) != len(tc.want) {
				t.Fatalf("levels %+v, want %+v", got.Levels, tc.want)
			}
			for i := range tc.want {
				if got.Levels[i] != tc.want[i] {
					t.Errorf("levels %+v, want %+v", got.Levels, tc.want)
				}
			}
		})
	}
}
