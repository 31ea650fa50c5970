package server

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// metrics are the server's Prometheus metrics, on its own registry (no
// global state).
type metrics struct {
	latency   *prometheus.HistogramVec
	inFlight  prometheus.Gauge
	refreshes *prometheus.CounterVec
	lookupReq *prometheus.CounterVec // storage requests of lookups, by part
	cacheHits prometheus.Counter
	pageHits  prometheus.Counter
	rows      prometheus.Counter
	joinRows  prometheus.Counter
}

func newMetrics(reg *prometheus.Registry, st *ariadne.Store, ready *atomic.Bool) *metrics {
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ariadne_http_request_duration_seconds", Help: "Latency of HTTP requests by endpoint and status class.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"endpoint", "code"}),
		inFlight:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "ariadne_http_requests_in_flight", Help: "Requests being served."}),
		refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ariadne_refreshes_total", Help: "Polls of the store for newer index versions, by result."}, []string{"result"}),
		lookupReq: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ariadne_lookup_storage_requests_total", Help: "Storage requests made by lookups, by part (index or data)."}, []string{"part"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{Name: "ariadne_lookup_cache_hits_total", Help: "Metadata and fragment cache hits of lookups."}),
		pageHits:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ariadne_lookup_page_cache_hits_total", Help: "Decoded data pages served from the page cache."}),
		rows:      prometheus.NewCounter(prometheus.CounterOpts{Name: "ariadne_lookup_rows_total", Help: "Rows returned by lookups."}),
		joinRows:  prometheus.NewCounter(prometheus.CounterOpts{Name: "ariadne_join_rows_total", Help: "Rows streamed by joins."}),
	}
	reg.MustRegister(m.latency, m.inFlight, m.refreshes, m.lookupReq, m.cacheHits, m.pageHits, m.rows, m.joinRows,
		&storeCollector{st: st, ready: ready},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observeLookup(p rowindex.Plan, rows int) {
	m.lookupReq.WithLabelValues("index").Add(float64(p.Index.Requests))
	m.lookupReq.WithLabelValues("data").Add(float64(p.Data.Requests))
	m.cacheHits.Add(float64(p.Index.CacheHits + p.Data.CacheHits))
	m.pageHits.Add(float64(p.Data.PageHits))
	m.rows.Add(float64(rows))
}

// storeCollector reports the store's counters and the versions served
// when scraped.
type storeCollector struct {
	st    *ariadne.Store
	ready *atomic.Bool
}

var (
	descStorageRequests = prometheus.NewDesc("ariadne_storage_requests_total", "Storage requests, by store (index: the store root; data: data files) and operation.", []string{"store", "op"}, nil)
	descStorageBytes    = prometheus.NewDesc("ariadne_storage_bytes_total", "Bytes read or written, by store and operation.", []string{"store", "op"}, nil)
	descVersion         = prometheus.NewDesc("ariadne_row_index_version", "Manifest version served, by index and row index.", []string{"index", "row_index"}, nil)
	descCacheBytes      = prometheus.NewDesc("ariadne_cache_bytes", "Bytes held by the caches of the open row indexes.", nil, nil)
	descReady           = prometheus.NewDesc("ariadne_ready", "1 once the warm-up is done.", nil, nil)
)

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStorageRequests, descStorageBytes, descVersion, descCacheBytes, descReady} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.st.Stats()
	for name, st := range map[string]store.Stats{"index": s.Index, "data": s.Data} {
		for _, op := range []store.Op{store.OpStat, store.OpRead, store.OpWrite, store.OpDelete, store.OpList} {
			o := st.Op(op)
			ch <- prometheus.MustNewConstMetric(descStorageRequests, prometheus.CounterValue, float64(o.Requests), name, op.String())
			ch <- prometheus.MustNewConstMetric(descStorageBytes, prometheus.CounterValue, float64(o.Bytes), name, op.String())
		}
	}
	for ix, rows := range c.st.Versions() {
		for ri, v := range rows {
			ch <- prometheus.MustNewConstMetric(descVersion, prometheus.GaugeValue, float64(v), ix, ri)
		}
	}
	ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(c.st.CacheBytes()))
	r := 0.0
	if c.ready.Load() {
		r = 1
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, r)
}
