package changes

// Limits bound one change batch, as the provider counts them. Zero fields mean "no limit".
type Limits struct {
	// MaxRecords is the number of record values per batch (an alias counts as one); it
	// bounds the number of changes too.
	MaxRecords int
	// MaxValueChars is the total number of characters of record values per batch.
	MaxValueChars int
	// UpsertCost multiplies an UPSERT's values and characters: Route 53 counts an UPSERT
	// as a DELETE plus a CREATE. 0 means 1.
	UpsertCost int
}

// Route53Limits are ChangeResourceRecordSets' limits: 1,000 values and 32,000 value
// characters per request, an UPSERT counted twice.
var Route53Limits = Limits{MaxRecords: 1000, MaxValueChars: 32000, UpsertCost: 2}

// Cost returns what one change counts against the limits.
func (l Limits) Cost(c Change) (records, chars int) {
	if c.Endpoint == nil {
		return 0, 0
	}
	records = max(len(c.Endpoint.Targets), 1)
	for _, t := range c.Endpoint.Targets {
		chars += len(t)
	}
	if c.Action == Upsert && l.UpsertCost > 1 {
		records, chars = records*l.UpsertCost, chars*l.UpsertCost
	}
	return records, chars
}

// BatchCost sums Cost over changes.
func (l Limits) BatchCost(changes []Change) (records, chars int) {
	for _, c := range changes {
		r, ch := l.Cost(c)
		records, chars = records+r, chars+ch
	}
	return records, chars
}

// Fits reports whether a batch costing records and chars is within the limits.
func (l Limits) Fits(records, chars int) bool {
	return (l.MaxRecords <= 0 || records <= l.MaxRecords) && (l.MaxValueChars <= 0 || chars <= l.MaxValueChars)
}

// Pack fills batches with whole units in order; a unit never straddles two batches. The
// units too big for any batch are returned apart.
func Pack(units []Unit, lim Limits) (batches [][]Unit, tooBig []Unit) {
	var cur []Unit
	curN, curChars := 0, 0
	for _, u := range units {
		n, chars := lim.BatchCost(u.Changes)
		if !lim.Fits(n, chars) {
			tooBig = append(tooBig, u)
			continue
		}
		if !lim.Fits(curN+n, curChars+chars) {
			batches = append(batches, cur)
			cur, curN, curChars = nil, 0, 0
		}
		cur = append(cur, u)
		curN += n
		curChars += chars
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	return batches, tooBig
}
