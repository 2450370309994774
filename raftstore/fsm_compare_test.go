package raftstore

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"
)

// TestFSMCompare applies random conditional commands against a map model:
// each command's conditions are decided against the state left by every
// entry before it — including those earlier in the same ApplyBatch, which
// the FSM has not yet written when it meets the command — and a command
// whose condition fails responds ErrCompareFailed and changes nothing.
func TestFSMCompare(t *testing.T) {
	for _, batch := range []int{1, 7, 200} {
		t.Run(fmt.Sprintf("batch=%d", batch), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(batch), 42))
			f := openFSM(t, t.TempDir(), nil)
			model := map[string]string{}
			var logs []*raft.Log
			var want []bool // whether each command applies
			failed := 0
			for i := range 600 {
				k := fmt.Sprintf("k%d", rng.IntN(8))
				v := fmt.Sprintf("v%d", i)
				// The condition: the key's current value, a stale one, its
				// absence, or the empty value; the same key, or another one.
				ck := k
				if rng.IntN(3) == 0 {
					ck = fmt.Sprintf("k%d", rng.IntN(8))
				}
				var cond []byte
				switch rng.IntN(4) {
				case 0:
					if cur, ok := model[ck]; ok {
						cond = []byte(cur)
					}
				case 1:
					cond = fmt.Appendf(nil, "v%d", rng.IntN(i+1))
				case 2:
					cond = nil
				case 3:
					cond = []byte{}
				}
				cur, ok := model[ck]
				holds := cond == nil && !ok || cond != nil && ok && cur == string(cond)
				cmd := AppendCompare(nil, []byte(ck), cond)
				del := rng.IntN(5) == 0
				if del {
					cmd = AppendDelete(cmd, []byte(k))
				} else {
					cmd = AppendSet(cmd, []byte(k), []byte(v))
				}
				switch {
				case !holds:
					failed++
				case del:
					delete(model, k)
				default:
					model[k] = v
				}
				logs = append(logs, &raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: cmd})
				want = append(want, holds)
			}
			for first := 0; first < len(logs); first += batch {
				part := logs[first:min(first+batch, len(logs))]
				for j, r := range f.ApplyBatch(part) {
					switch holds := want[first+j]; {
					case holds && r != nil:
						t.Fatalf("entry %d: response %v, want nil", first+j+1, r)
					case !holds && r != ErrCompareFailed:
						t.Fatalf("entry %d: response %v, want ErrCompareFailed", first+j+1, r)
					}
				}
			}
			sameState(t, "after the conditional commands", fsmState(t, f), model)
			if got := f.AppliedIndex(); got != uint64(len(logs)) {
				t.Fatalf("AppliedIndex %d, want %d", got, len(logs))
			}
			if failed == 0 || failed == len(logs) {
				t.Fatalf("%d of %d conditions failed: the test exercises only one outcome", failed, len(logs))
			}
		})
	}
}
