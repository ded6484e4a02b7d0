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

// benchPackets is benchQueries packed, as the UDP listener receives them.
func benchPackets(b *testing.B) [][]byte {
	b.Helper()
	qs := benchQueries()
	ps := make([][]byte, len(qs))
	for i, q := range qs {
		q.Id = uint16(i)
		p, err := q.Pack()
		if err != nil {
			b.Fatal(err)
		}
		ps[i] = p
	}
	return ps
}

// BenchmarkAnswerPacket measures the UDP listener's per-packet work: raw query bytes in,
// packed reply out, over the weighted zone.
func BenchmarkAnswerPacket(b *testing.B) {
	srv := New(benchStore(b), nil)
	ps := benchPackets(b)
	rp, req := newReply(), new(dns.Msg)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if srv.answerPacket(rp, req, ps[i%len(ps)]) == nil {
			b.Fatal("no reply")
		}
		rp.reset()
	}
}

// BenchmarkReadQuery compares reading a query with parseQuery and with miekg/dns's Unpack,
// which the UDP listener used for every packet before.
func BenchmarkReadQuery(b *testing.B) {
	pkt, err := query("host1.bench.test.", dns.TypeA, 1232).Pack()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parseQuery", func(b *testing.B) {
		var req dns.Msg
		var opt dns.OPT
		b.ReportAllocs()
		for b.Loop() {
			if !parseQuery(&req, &opt, pkt) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("Unpack", func(b *testing.B) {
		var req dns.Msg
		b.ReportAllocs()
		for b.Loop() {
			if err := req.Unpack(pkt); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteReply compares packing a weighted answer with packReply and with miekg/dns's
// PackBuffer, which the server used for every reply before.
func BenchmarkWriteReply(b *testing.B) {
	srv := New(benchStore(b), nil)
	rp := newReply()
	limit := srv.respond(rp, query("host1.bench.test.", dns.TypeA, 1232), true)
	b.Run("packReply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := packReply(&rp.msg, rp.wire, limit); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("PackBuffer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := rp.msg.PackBuffer(rp.wire); err != nil {
				b.Fatal(err)
			}
		}
	})
}
