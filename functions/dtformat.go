package functions

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// Java date-time patterns (SimpleDateFormat / DateTimeFormatter letters, as
// Flink's DATE_FORMAT, TO_TIMESTAMP, FROM_UNIXTIME use them) compiled once
// and applied without allocation. Supported letters: y (yyyy, yy), M (M,
// MM, MMM, MMMM), d, D (day of year), H, k, h, K, m, s, S (fraction of
// second: SSS millis, SSSSSS micros), E (EEE, EEEE), a, u (ISO day of
// week), w (ISO week), z/Z/X (printed as UTC; parsed as an offset, which
// UNIX_TIMESTAMP applies). 'text' quotes literals.

type dtField struct {
	letter byte // 0 for a literal
	count  int
	lit    string
}

type dtPattern struct {
	src    string
	fields []dtField
}

var monthNames = [12]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
var dayNames = [7]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

func compileDT(src string) (*dtPattern, error) {
	p := &dtPattern{src: src}
	lit := []byte{}
	flush := func() {
		if len(lit) > 0 {
			p.fields = append(p.fields, dtField{lit: string(lit)})
			lit = lit[:0]
		}
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\'':
			j := i + 1
			if j < len(src) && src[j] == '\'' { // '' is a quote
				lit = append(lit, '\'')
				i += 2
				continue
			}
			for j < len(src) {
				if src[j] == '\'' {
					if j+1 < len(src) && src[j+1] == '\'' {
						lit = append(lit, '\'')
						j += 2
						continue
					}
					break
				}
				lit = append(lit, src[j])
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated quote in date format '%s'", src)
			}
			i = j + 1
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			j := i
			for j < len(src) && src[j] == c {
				j++
			}
			switch c {
			case 'y', 'M', 'd', 'D', 'H', 'k', 'h', 'K', 'm', 's', 'S', 'E', 'a', 'u', 'w', 'z', 'Z', 'X', 'G':
			default:
				return nil, fmt.Errorf("unsupported letter '%c' in date format '%s'", c, src)
			}
			flush()
			p.fields = append(p.fields, dtField{letter: c, count: j - i})
			i = j
		default:
			lit = append(lit, c)
			i++
		}
	}
	flush()
	return p, nil
}

type dtCache struct {
	last atomic.Pointer[dtPattern]
}

func (c *dtCache) get(src string) (*dtPattern, error) {
	if p := c.last.Load(); p != nil && p.src == src {
		return p, nil
	}
	p, err := compileDT(src)
	if err != nil {
		return nil, err
	}
	c.last.Store(p)
	return p, nil
}

// isoWeek returns the ISO-8601 week number of a date.
func isoWeek(days int64) int64 {
	// ISO day of week, 1 = Monday (1970-01-01 was a Thursday)
	dow := floorMod(days+3, 7) + 1
	thursday := days - dow + 4
	y, _, _ := civil(thursday)
	jan1 := daysFromCivil(y, 1, 1)
	return (thursday-jan1)/7 + 1
}

// format appends the timestamp us formatted with p.
func (p *dtPattern) format(dst []byte, us int64) []byte {
	days, tod := splitMicros(us)
	y, mo, d := civil(days)
	for _, f := range p.fields {
		n := f.count
		switch f.letter {
		case 0:
			dst = append(dst, f.lit...)
		case 'G':
			if y > 0 {
				dst = append(dst, "AD"...)
			} else {
				dst = append(dst, "BC"...)
			}
		case 'y':
			if n == 2 {
				dst = appendPadded(dst, floorMod(y, 100), 2)
			} else {
				dst = appendPadded(dst, y, n)
			}
		case 'M':
			switch {
			case n >= 4:
				dst = append(dst, monthNames[mo-1]...)
			case n == 3:
				dst = append(dst, monthNames[mo-1][:3]...)
			default:
				dst = appendPadded(dst, mo, n)
			}
		case 'd':
			dst = appendPadded(dst, d, n)
		case 'D':
			dst = appendPadded(dst, days-daysFromCivil(y, 1, 1)+1, n)
		case 'H':
			dst = appendPadded(dst, tod/usPerHour, n)
		case 'k':
			h := tod / usPerHour
			if h == 0 {
				h = 24
			}
			dst = appendPadded(dst, h, n)
		case 'h':
			h := tod / usPerHour % 12
			if h == 0 {
				h = 12
			}
			dst = appendPadded(dst, h, n)
		case 'K':
			dst = appendPadded(dst, tod/usPerHour%12, n)
		case 'm':
			dst = appendPadded(dst, tod/usPerMin%60, n)
		case 's':
			dst = appendPadded(dst, tod/usPerSec%60, n)
		case 'S':
			frac := tod % usPerSec // micros
			div := int64(100000)
			for i := 0; i < n; i++ {
				if div > 0 {
					dst = append(dst, byte('0'+frac/div%10))
					div /= 10
				} else {
					dst = append(dst, '0')
				}
			}
		case 'E':
			name := dayNames[floorMod(days+3, 7)]
			if n >= 4 {
				dst = append(dst, name...)
			} else {
				dst = append(dst, name[:3]...)
			}
		case 'u':
			dst = appendPadded(dst, floorMod(days+3, 7)+1, n)
		case 'w':
			dst = appendPadded(dst, isoWeek(days), n)
		case 'a':
			if tod < 12*usPerHour {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case 'z':
			dst = append(dst, "UTC"...)
		case 'Z':
			dst = append(dst, "+0000"...)
		case 'X':
			dst = append(dst, 'Z')
		}
	}
	return dst
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func numericLetter(c byte) bool {
	switch c {
	case 'y', 'd', 'D', 'H', 'k', 'h', 'K', 'm', 's', 'S', 'u', 'w':
		return true
	}
	return false
}

// parse reads s with p into micros since the epoch; ok is false when s
// does not match. Missing fields default to 1970-01-01 00:00:00. A zone
// in s is read and ignored (TO_TIMESTAMP's local date-time, as Flink's).
func (p *dtPattern) parse(s string) (int64, bool) {
	us, _, ok := p.parseZoned(s)
	return us, ok
}

// parseZoned is parse that also returns the zone offset s names (z, Z or X
// fields), in micros east of UTC (0 when s names none): the instant is
// us - off.
func (p *dtPattern) parseZoned(s string) (us, off int64, ok bool) {
	y, mo, d := int64(1970), int64(1), int64(1)
	var h, mi, sec, frac int64
	pm, hasAmPm := false, false
	i := 0
	for fi, f := range p.fields {
		if f.letter == 0 {
			if len(s)-i < len(f.lit) || s[i:i+len(f.lit)] != f.lit {
				return 0, 0, false
			}
			i += len(f.lit)
			continue
		}
		numeric := numericLetter(f.letter) || (f.letter == 'M' && f.count <= 2)
		if numeric {
			// Fixed width when the next field is numeric too, else up to
			// 9 digits (a sign only for years).
			maxw := 9
			if fi+1 < len(p.fields) {
				nf := p.fields[fi+1]
				if nf.letter != 0 && (numericLetter(nf.letter) || (nf.letter == 'M' && nf.count <= 2)) {
					maxw = f.count
				}
			}
			neg := false
			if f.letter == 'y' && i < len(s) && s[i] == '-' {
				neg = true
				i++
			}
			start := i
			var v int64
			for i < len(s) && i-start < maxw && isDigit(s[i]) {
				v = v*10 + int64(s[i]-'0')
				i++
			}
			nd := i - start
			if nd == 0 {
				return 0, 0, false
			}
			if neg {
				v = -v
			}
			switch f.letter {
			case 'y':
				if f.count == 2 && nd == 2 {
					v += 2000
				}
				y = v
			case 'M':
				mo = v
			case 'd':
				d = v
			case 'H', 'k':
				h = v
				if f.letter == 'k' && v == 24 {
					h = 0
				}
			case 'h', 'K':
				h = v % 12
			case 'm':
				mi = v
			case 's':
				sec = v
			case 'S':
				for k := nd; k < 6; k++ {
					v *= 10
				}
				for k := nd; k > 6; k-- {
					v /= 10
				}
				frac = v
			}
			continue
		}
		switch f.letter {
		case 'M':
			found := false
			for k, name := range monthNames {
				cand := name
				if f.count == 3 {
					cand = name[:3]
				}
				if len(s)-i >= len(cand) && equalFold(s[i:i+len(cand)], cand) {
					mo, i, found = int64(k+1), i+len(cand), true
					break
				}
			}
			if !found {
				return 0, 0, false
			}
		case 'E':
			found := false
			for _, name := range dayNames {
				cand := name
				if f.count < 4 {
					cand = name[:3]
				}
				if len(s)-i >= len(cand) && equalFold(s[i:i+len(cand)], cand) {
					i, found = i+len(cand), true
					break
				}
			}
			if !found {
				return 0, 0, false
			}
		case 'a':
			if len(s)-i < 2 {
				return 0, 0, false
			}
			switch {
			case equalFold(s[i:i+2], "AM"):
			case equalFold(s[i:i+2], "PM"):
				pm = true
			default:
				return 0, 0, false
			}
			hasAmPm = true
			i += 2
		case 'z', 'Z', 'X':
			var zok bool
			i, off, zok = parseZone(s, i, f.letter)
			if !zok {
				return 0, 0, false
			}
		case 'G':
			if len(s)-i >= 2 && s[i:i+2] == "AD" {
				i += 2
			}
		}
	}
	if i != len(s) {
		return 0, 0, false
	}
	if hasAmPm && pm {
		h += 12
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59 {
		return 0, 0, false
	}
	return daysFromCivil(y, mo, d)*usPerDay + h*usPerHour + mi*usPerMin + sec*usPerSec + frac, off, true
}

// parseZone reads the zone at s[i:] for a z, Z or X pattern letter: as
// Java's SimpleDateFormat, which Flink's UNIX_TIMESTAMP parses with, X
// takes 'Z' or an ISO 8601 offset (+08, +0800, +08:00), Z an RFC 822 one
// (+0800), z a name; all three take either offset form, and the names
// UTC, GMT and GMT+08:00 (other zone names are not read). It returns the
// index after the zone and its offset in micros east of UTC.
func parseZone(s string, i int, letter byte) (int, int64, bool) {
	rest := s[i:]
	switch {
	case letter == 'X' && strings.HasPrefix(rest, "Z"):
		return i + 1, 0, true
	case letter != 'X' && (strings.HasPrefix(rest, "UTC") || strings.HasPrefix(rest, "GMT")):
		i += 3
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			return parseOffset(s, i)
		}
		return i, 0, true
	}
	return parseOffset(s, i)
}

// parseOffset reads +hh, +hhmm or +hh:mm (or with '-') at s[i:].
func parseOffset(s string, i int) (int, int64, bool) {
	if i >= len(s) || (s[i] != '+' && s[i] != '-') {
		return i, 0, false
	}
	neg := s[i] == '-'
	i++
	two := func() (int64, bool) {
		if i+2 > len(s) || !isDigit(s[i]) || !isDigit(s[i+1]) {
			return 0, false
		}
		v := int64(s[i]-'0')*10 + int64(s[i+1]-'0')
		i += 2
		return v, true
	}
	h, ok := two()
	if !ok || h > 23 {
		return i, 0, false
	}
	var m int64
	if i < len(s) && s[i] == ':' {
		i++
		if m, ok = two(); !ok {
			return i, 0, false
		}
	} else if i+1 < len(s) && isDigit(s[i]) {
		if m, ok = two(); !ok {
			return i, 0, false
		}
	}
	if m > 59 {
		return i, 0, false
	}
	off := h*usPerHour + m*usPerMin
	if neg {
		off = -off
	}
	return i, off, true
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
