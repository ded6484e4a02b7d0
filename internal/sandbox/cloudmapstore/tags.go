package cloudmapstore

import (
	"slices"
)

// taggedLocked finds the namespace or service an ARN names and returns its tags and a
// function that records it with new tags in c; s.writeMu or s.mu must be held.
func (s *Store) taggedLocked(arn string, c *change) ([]Tag, func([]Tag), *Error) {
	for _, n := range s.namespaces {
		if n.ARN == arn {
			return n.Tags, func(tags []Tag) { v := *n; v.Tags = tags; c.namespaces[n.ID] = &v }, nil
		}
	}
	for _, v := range s.services {
		if v.ARN == arn {
			return v.Tags, func(tags []Tag) { n := *v; n.Tags = tags; c.services[v.ID] = &n }, nil
		}
	}
	return nil, nil, errorf(CodeResourceNotFound, "The operation can't be completed because the resource was not found: %s", arn)
}

// retag writes the tags edit makes of the current tags of the namespace or service arn
// names; an error from edit changes nothing.
func (s *Store) retag(arn string, edit func(have []Tag) ([]Tag, *Error)) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	c := newChange()
	have, set, err := s.taggedLocked(arn, c)
	if err != nil {
		return err
	}
	n, err := edit(have)
	if err != nil {
		return err
	}
	set(n)
	return s.commit(c)
}

func checkARN(arn string) *Error {
	if arn == "" {
		return notNull("resourceARN")
	}
	if len(arn) > 1011 {
		return maxLen(arn, "resourceARN", 1011)
	}
	return nil
}

// TagResource adds tags to a namespace or service, replacing the values of keys it has.
func (s *Store) TagResource(arn string, tags []Tag) error {
	if err := checkARN(arn); err != nil {
		return err
	}
	if tags == nil {
		return notNull("tags")
	}
	if err := checkTags(tags, "tags"); err != nil {
		return err
	}
	return s.retag(arn, func(have []Tag) ([]Tag, *Error) {
		n := mergeTags(have, tags)
		if len(n) > maxTagsPerResource {
			return nil, tooManyTags(arn)
		}
		return n, nil
	})
}

// UntagResource removes tag keys from a namespace or service; a key it lacks is ignored.
func (s *Store) UntagResource(arn string, keys []string) error {
	if err := checkARN(arn); err != nil {
		return err
	}
	if keys == nil {
		return notNull("tagKeys")
	}
	return s.retag(arn, func(have []Tag) ([]Tag, *Error) {
		return slices.DeleteFunc(slices.Clone(have), func(t Tag) bool { return slices.Contains(keys, t.Key) }), nil
	})
}

// ListTagsForResource returns a namespace's or service's tags.
func (s *Store) ListTagsForResource(arn string) ([]Tag, error) {
	if err := checkARN(arn); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	have, _, err := s.taggedLocked(arn, newChange())
	if err != nil {
		return nil, err
	}
	return slices.Clone(have), nil
}
