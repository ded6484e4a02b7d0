package dnsserver

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

const benchNames = 10000

// benchStore is a zone of benchNames weighted names with two members each, the shape of
// external-dns's blue/green records.
func benchStore(b *testing.B) *zones.Store {
	b.Helper()
	st := newStore(b)
	id := newZone(b, st, "bench.test")
	const perBatch = zones.MaxRecordsPerBatch / 2
	batch := make([]zones.Change, 0, zones.MaxRecordsPerBatch)
	for i := range benchNames {
		name := fmt.Sprintf("host%d.bench.test", i)
		batch = append(batch,
			weighted(name, "A", "blue", 1, fmt.Sprintf("10.%d.%d.1", i/256, i%256)),
			weighted(name, "A", "green", 3, fmt.Sprintf("10.%d.%d.2", i/256, i%256)))
		if len(batch) == 2*perBatch || i == benchNames-1 {
			apply(b, st, id, batch...)
			batch = batch[:0]
		}
	}
	return st
}

func benchQueries() []*dns.Msg {
	qs := make([]*dns.Msg, benchNames)
	for i := range qs {
		qs[i] = query(fmt.Sprintf("host%d.bench.test.", i), dns.TypeA, 1232)
	}
	return qs
}

// BenchmarkServeDNS measures ServeDNS alone (no sockets) over the weighted zone.
func BenchmarkServeDNS(b *testing.B) {
	srv := New(benchStore(b), nil)
	qs := benchQueries()
	w := newRecorder(true)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		srv.ServeDNS(w, qs[i%len(qs)])
	}
	if w.writes == 0 {
		b.Fatal("no replies")
	}
}

// BenchmarkServeDNSParallel is BenchmarkServeDNS on every GOMAXPROCS at once, to show the
// store's read lock and the reply pool do not serialise queries.
func BenchmarkServeDNSParallel(b *testing.B) {
	srv := New(benchStore(b), nil)
	qs := benchQueries()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		w := newRecorder(true)
		for i := 0; pb.Next(); i++ {
			srv.ServeDNS(w, qs[i%len(qs)])
		}
	})
}

// BenchmarkNXDOMAIN measures the negative path (SOA in authority).
func BenchmarkNXDOMAIN(b *testing.B) {
	srv := New(benchStore(b), nil)
	q := query("missing.bench.test.", dns.TypeA, 1232)
	w := newRecorder(true)
	b.ReportAllocs()
	for b.Loop() {
		srv.ServeDNS(w, q)
	}
}
