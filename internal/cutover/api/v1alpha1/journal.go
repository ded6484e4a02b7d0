package v1alpha1

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// EntryFrom is e as status keeps it. Its time keeps microseconds, the precision
// metav1.MicroTime writes.
func EntryFrom(e journal.Entry) JournalEntry {
	return JournalEntry{
		Seq: e.Seq, Time: metav1.NewMicroTime(e.Time.UTC()), Kind: e.Kind, Step: e.Step,
		Weights: maps.Clone(e.Weights), ChangeID: e.ChangeID, By: e.By, Detail: e.Detail,
		Data: slices.Clone(e.Data), TTL: e.TTL, PlanHash: e.PlanHash, ID: e.ID, Token: e.Token,
	}
}

// Entry is the journal entry j keeps.
func (j JournalEntry) Entry() journal.Entry {
	return journal.Entry{
		Seq: j.Seq, Time: j.Time.UTC(), Kind: j.Kind, Step: j.Step,
		Weights: maps.Clone(j.Weights), ChangeID: j.ChangeID, By: j.By, Detail: j.Detail,
		Data: slices.Clone(j.Data), TTL: j.TTL, PlanHash: j.PlanHash, ID: j.ID, Token: j.Token,
	}
}

// Entries is the journal status keeps, as journal entries: what the engine, the journal
// store and the status projection read.
func (s CutoverStatus) Entries() []journal.Entry {
	out := make([]journal.Entry, 0, len(s.Journal))
	for _, e := range s.Journal {
		out = append(out, e.Entry())
	}
	return out
}
