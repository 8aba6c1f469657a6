package checkpoint

import (
	"errors"
	"testing"

	"github.com/streamsql/streamsql/internal/config"
)

// TestOptionsRefuseBadValues: every bad value is a *config.Error naming
// the key and the value, including those accepted before (a negative
// min-pause or restart delay) or refused without naming the key (a zero
// timeout).
func TestOptionsRefuseBadValues(t *testing.T) {
	for _, bad := range []map[string]string{
		{KeyMinPause: "-1s"}, {KeyTimeout: "0"}, {KeyInterval: "-1s"}, {KeyRetention: "KEEP"}, {KeyNumRetained: "0"},
	} {
		_, err := ParseOptions(bad)
		var ce *config.Error
		if !errors.As(err, &ce) || bad[ce.Key] != ce.Value {
			t.Errorf("ParseOptions(%v) = %v, want a config.Error naming the key and value", bad, err)
		}
	}
	for _, bad := range []map[string]string{
		{KeyRestartType: "fixed-delay", OptFixedDelay.Key(): "-1s"},
		{KeyRestartType: "failure-rate", OptRateDelay.Key(): "-1s"},
		{KeyRestartType: "exponential-delay", OptExpMax.Key(): "-1s"},
		{KeyRestartType: "exponential-delay", OptExpMul.Key(): "0.5"},
	} {
		if _, err := ParseRestart(bad, true); !errors.Is(err, config.ErrBadValue) {
			t.Errorf("ParseRestart(%v) = %v, want a bad value error", bad, err)
		}
	}
	if s, err := ParseRestart(map[string]string{KeyRestartType: "FixedDelay"}, true); err != nil || s.String() != "fixed-delay (1 attempts, 1s)" {
		t.Errorf("an alias of a strategy: %v, %v", s, err)
	}
}
