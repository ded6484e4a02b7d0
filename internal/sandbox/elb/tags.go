package elb

import (
	"fmt"
	"slices"
)

// TagDescription is the tags of one resource.
type TagDescription struct {
	ResourceARN string
	Tags        []Tag
}

// taggable finds any taggable resource by ARN and returns its tags and a function that
// stores it with new tags in t.
func (t *txn) taggable(region, arn string) ([]Tag, func([]Tag), *Error) {
	_, kind, ok := arnParts(arn)
	if !ok {
		return nil, nil, validationf("'%s' is not a valid resource ARN", arn)
	}
	switch kind {
	case kindLoadBalancer:
		lb, err := t.getLB(region, arn)
		if err != nil {
			return nil, nil, err
		}
		return lb.Tags, func(tags []Tag) { n := *lb; n.Tags = tags; t.lbs[arn] = &n }, nil
	case kindTargetGroup:
		tg, err := t.getTG(region, arn)
		if err != nil {
			return nil, nil, err
		}
		return tg.Tags, func(tags []Tag) { n := *tg; n.Tags = tags; t.tgs[arn] = &n }, nil
	case kindListener:
		l, err := t.getListener(region, arn)
		if err != nil {
			return nil, nil, err
		}
		return l.Tags, func(tags []Tag) { n := *l; n.Tags = tags; t.listeners[arn] = &n }, nil
	case kindRule:
		r, err := t.getRule(region, arn)
		if err != nil {
			return nil, nil, err
		}
		return r.Tags, func(tags []Tag) { n := *r; n.Tags = tags; t.rules[arn] = &n }, nil
	}
	return nil, nil, validationf("'%s' is not a valid resource ARN", arn)
}

// checkResourceARNs applies DescribeTags' limit: up to 20 resources per call.
func checkResourceARNs(arns []string) *Error {
	if len(arns) == 0 {
		return notNull("resourceArns")
	}
	if len(arns) > maxResourcesPerTagRequest {
		return constraint("["+arns[0]+", …]", "resourceArns", "Member must have length less than or equal to 20")
	}
	return nil
}

// checkOneResource applies AddTags' and RemoveTags' limit: their ResourceArns is a list
// in the model, but ELBv2 tags or untags one resource per call. AddTags' message is the
// one real ELBv2 answers (aws/aws-sdk-go-v2 issue 2715, 2024); RemoveTags' limit is
// reported by fog-aws and moto, its wording here is the sandbox's.
func checkOneResource(arns []string, verb string) *Error {
	switch {
	case len(arns) == 0:
		return notNull("resourceArns")
	case len(arns) > 1:
		return validationf("Only one resource can be %s at a time", verb)
	}
	return nil
}

// AddTags adds tags to one resource (arns has exactly one ARN, as ELBv2 requires),
// replacing the values of keys it already has.
func (s *Store) AddTags(region string, arns []string, tags []Tag) error {
	if err := checkOneResource(arns, "tagged"); err != nil {
		return err
	}
	if len(tags) == 0 {
		return notNull("tags")
	}
	if err := checkTags(tags, "tags"); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	for _, arn := range dedupe(arns) {
		have, set, err := t.taggable(region, arn)
		if err != nil {
			return err
		}
		n := mergeTags(have, tags)
		if len(n) > maxTagsPerResource {
			return errorf(CodeTooManyTags, "You've reached the limit on the number of tags for this resource (%d)", maxTagsPerResource)
		}
		set(n)
	}
	return s.commit(t)
}

// RemoveTags removes tag keys from one resource (arns has exactly one ARN, as ELBv2
// requires); a key the resource lacks is ignored.
func (s *Store) RemoveTags(region string, arns, keys []string) error {
	if err := checkOneResource(arns, "untagged"); err != nil {
		return err
	}
	if len(keys) == 0 {
		return notNull("tagKeys")
	}
	for i, k := range keys {
		if err := checkTagKey(k, fmt.Sprintf("tagKeys.%d.member", i+1)); err != nil {
			return err
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	for _, arn := range dedupe(arns) {
		have, set, err := t.taggable(region, arn)
		if err != nil {
			return err
		}
		set(slices.DeleteFunc(slices.Clone(have), func(tg Tag) bool { return slices.Contains(keys, tg.Key) }))
	}
	return s.commit(t)
}

// DescribeTags returns the tags of each resource, in the order asked.
func (s *Store) DescribeTags(region string, arns []string) ([]TagDescription, error) {
	if err := checkResourceARNs(arns); err != nil {
		return nil, err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	t := s.begin()
	var out []TagDescription
	for _, arn := range arns {
		have, _, err := t.taggable(region, arn)
		if err != nil {
			return nil, err
		}
		out = append(out, TagDescription{ResourceARN: arn, Tags: have})
	}
	return out, nil
}
