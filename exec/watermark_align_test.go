package exec

import "testing"

// TestAlignGroup: a member more than its max drift ahead of the group's
// smallest watermark pauses until the smallest moves up (its channel is
// closed then); a member without a watermark yet, an idle one and one
// whose input ended hold nobody back.
func TestAlignGroup(t *testing.T) {
	j := &Job{}
	g := j.alignGroupOf("g")
	if j.alignGroupOf("g") != g || j.alignGroupOf("h") == g {
		t.Fatal("one group per name")
	}
	a, b := &subtask{}, &subtask{}
	g.join(a)
	g.join(b)
	const drift = 5
	paused := func(wm int64) bool {
		p, _ := g.pause(wm, drift)
		return p
	}
	g.announce(a, 100, false, false)
	if paused(100) {
		t.Fatal("a member pauses while the other has no watermark yet")
	}
	g.announce(b, 10, false, false)
	p, moved := g.pause(100, drift)
	if !p {
		t.Fatal("a member 90 ahead with a drift of 5 does not pause")
	}
	if paused(10) || paused(15) {
		t.Fatal("the smallest member, or one within the drift, pauses")
	}
	g.announce(b, 94, false, false)
	select {
	case <-moved:
	default:
		t.Fatal("the smallest watermark moved up without a wake-up")
	}
	if !paused(100) {
		t.Fatal("100 is still more than 5 ahead of 94")
	}
	g.announce(b, 95, false, false)
	if paused(100) {
		t.Fatal("100 is within 5 of 95")
	}
	g.announce(a, 200, false, false)
	g.announce(b, 95, true, false)
	if paused(200) {
		t.Fatal("an idle member holds the group back")
	}
	g.announce(b, 95, false, false)
	if !paused(200) {
		t.Fatal("a member active again does not hold the group back")
	}
	g.announce(b, maxWatermark, false, true)
	if paused(200) {
		t.Fatal("an ended member holds the group back")
	}
}
