package kafka

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrTopicRecreated is matched (errors.Is) by a TopicRecreatedError.
var ErrTopicRecreated = errors.New("topic deleted and created again")

// TopicRecreatedError says that a topic has another id (Metadata's topic
// id, Kafka 2.8+) than the one the source or sink used before: it was
// deleted (and, for New not zero, created again under the same name, as a
// broker with auto-creation does on the next write), or the broker lost its
// data. Everything the topic held before is gone.
type TopicRecreatedError struct {
	Topic    string
	Old, New [16]byte // New is zero when the topic does not exist now
	// Source is set for a source's topic, Restored when Old comes from the
	// checkpoint the job restored.
	Source, Restored bool
}

func (e *TopicRecreatedError) Error() string {
	since := "since the job started writing to it"
	if e.Source {
		since = "since the job started reading it"
	}
	if e.Restored {
		since = "since the checkpoint the job restored"
	}
	var what string
	if e.New == ([16]byte{}) {
		what = fmt.Sprintf("topic '%s' was deleted %s (topic id %s, now none; or the broker lost its data, as a restarted kafka-dev does)", e.Topic, since, formatTopicID(e.Old))
	} else {
		what = fmt.Sprintf("topic '%s' was deleted and created again %s (topic id %s, now %s; or the broker lost its data and created it anew, as a restarted kafka-dev does)", e.Topic, since, formatTopicID(e.Old), formatTopicID(e.New))
	}
	if e.Source {
		return what + ": the messages read before are gone and the job's positions do not belong to the new topic; start the job without its checkpoints to read the topic from the start"
	}
	return what + ": the rows committed to it before are gone; the job cannot continue exactly where it was; start it without its checkpoints to write the table again"
}

func (e *TopicRecreatedError) Is(target error) bool { return target == ErrTopicRecreated }

// formatTopicID writes a topic id as Kafka's tools do (URL-safe base64,
// unpadded).
func formatTopicID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func parseTopicID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("bad topic id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// lookupTopicID asks the broker for the id of topic, without creating it;
// the zero id (and no error) when the topic does not exist or the broker
// has no topic ids.
func lookupTopicID(ctx context.Context, cl *kgo.Client, topic string) ([16]byte, error) {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = false
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return [16]byte{}, err
	}
	for _, t := range resp.Topics {
		if t.Topic == nil || *t.Topic != topic {
			continue
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			if errors.Is(err, kerr.UnknownTopicOrPartition) {
				return [16]byte{}, nil
			}
			return [16]byte{}, err
		}
		return t.TopicID, nil
	}
	return [16]byte{}, nil
}

// checkTopic compares the sink topic's id now with the one the sink knew
// (from its first look, or from the restored handle, want): a changed or
// vanished id is a TopicRecreatedError. The first id seen is remembered.
func (s *Sink) checkTopic(ctx context.Context, want string) error {
	adm, err := s.admin()
	if err != nil {
		return err
	}
	id, err := lookupTopicID(ctx, adm, s.topic)
	if err != nil {
		return s.errorf("looking up topic '%s': %v", s.topic, err)
	}
	if want != "" {
		old, err := parseTopicID(want)
		if err != nil {
			return s.errorf("damaged commit handle: %v", err)
		}
		if old != id {
			return s.wrap(&TopicRecreatedError{Topic: s.topic, Old: old, New: id, Restored: true})
		}
	}
	switch {
	case s.topicID == ([16]byte{}):
		s.topicID = id
	case s.topicID != id:
		return s.wrap(&TopicRecreatedError{Topic: s.topic, Old: s.topicID, New: id})
	}
	return nil
}
