package cloudmapstore

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OperationView is an operation as GetOperation reports it at one moment.
type OperationView struct {
	Operation
	Status     string
	UpdateDate time.Time
}

func (s *Store) operationView(o *Operation, now time.Time) OperationView {
	v := OperationView{Operation: *o, Status: o.Status(now), UpdateDate: o.UpdateDate(now)}
	v.Targets = maps.Clone(o.Targets)
	if v.Status != StatusFail {
		v.ErrorCode, v.ErrorMessage = "", ""
	}
	return v
}

// GetOperation returns an operation by id.
func (s *Store) GetOperation(id string) (OperationView, error) {
	if id == "" {
		return OperationView{}, notNull("operationId")
	}
	if err := maxLen(id, "operationId", maxResourceARNLen); err != nil {
		return OperationView{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	o := s.operations[id]
	if o == nil {
		return OperationView{}, operationNotFound(id)
	}
	return s.operationView(o, s.now()), nil
}

// operationTypes are the OperationType enum.
var operationTypes = []string{OpCreateNamespace, OpDeleteNamespace, "UPDATE_NAMESPACE", "UPDATE_SERVICE", OpRegisterInstance, OpDeregisterInstance}

// ListOperations lists operations, newest first, a page of MaxResults then filtered, as
// Cloud Map documents. Filters: NAMESPACE_ID and SERVICE_ID (EQ), STATUS and TYPE (EQ or
// IN), UPDATE_DATE (BETWEEN two Unix times in seconds).
func (s *Store) ListOperations(in ListInput) ([]OperationView, string, error) {
	size, err := pageSize(in.MaxResults, maxPageSize)
	if err != nil {
		return nil, "", err
	}
	conditions := map[string][]string{
		"NAMESPACE_ID": {filterEQ}, "SERVICE_ID": {filterEQ}, "STATUS": {filterEQ, filterIN},
		"TYPE": {filterEQ, filterIN}, "UPDATE_DATE": {filterBetween},
	}
	var from, to time.Time
	for i := range in.Filters {
		f := &in.Filters[i]
		if err := checkFilter(i, f, "filters", conditions); err != nil {
			return nil, "", err
		}
		switch f.Name {
		case "STATUS":
			for _, v := range f.Values {
				if err := enumCheck(v, fmt.Sprintf("filters.%d.member.values", i+1), StatusSubmitted, StatusPending, StatusSuccess, StatusFail); err != nil {
					return nil, "", err
				}
			}
		case "TYPE":
			for _, v := range f.Values {
				if err := enumCheck(v, fmt.Sprintf("filters.%d.member.values", i+1), operationTypes...); err != nil {
					return nil, "", err
				}
			}
		case "UPDATE_DATE":
			var perr *Error
			if from, perr = unixTime(f.Values[0]); perr != nil {
				return nil, "", perr
			}
			if to, perr = unixTime(f.Values[1]); perr != nil {
				return nil, "", perr
			}
		}
	}
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := make([]*Operation, 0, len(s.operations))
	for _, o := range s.operations {
		all = append(all, o)
	}
	// Newest first: the key counts down with time.
	key := func(o *Operation) string { return fmt.Sprintf("%020d/%s", math.MaxInt64-o.Created.UnixNano(), o.ID) }
	slices.SortFunc(all, func(a, b *Operation) int { return strings.Compare(key(a), key(b)) })
	got, next, perr := page(all, key, in.NextToken, size)
	if perr != nil {
		return nil, "", perr
	}
	var out []OperationView
	for _, o := range got {
		v := s.operationView(o, now)
		keep := true
		for _, f := range in.Filters {
			switch f.Name {
			case "NAMESPACE_ID":
				keep = keep && f.matches(o.NamespaceID)
			case "SERVICE_ID":
				keep = keep && f.matches(o.ServiceID)
			case "STATUS":
				keep = keep && f.matches(v.Status)
			case "TYPE":
				keep = keep && f.matches(o.Type)
			case "UPDATE_DATE":
				keep = keep && !v.UpdateDate.Before(from) && !v.UpdateDate.After(to)
			}
		}
		if keep {
			out = append(out, v)
		}
	}
	return out, next, nil
}

// unixTime reads an UPDATE_DATE value: Unix time in seconds, fractions allowed.
func unixTime(v string) (time.Time, *Error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return time.Time{}, invalidf("The UPDATE_DATE value %q is not a date in Unix time (seconds)", v)
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}
