package functions

// Calendar arithmetic on the physical representations (proleptic
// Gregorian, no time zones), without time.Time or allocation.

const (
	usPerSec  = int64(1_000_000)
	usPerMin  = 60 * usPerSec
	usPerHour = 60 * usPerMin
	usPerDay  = 24 * usPerHour
	msPerDay  = int64(86_400_000)
)

// civil returns year, month (1..12), day (1..31) of days since 1970-01-01.
func civil(days int64) (y, m, d int64) {
	z := days + 719468
	era := z
	if z < 0 {
		era = z - 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return
}

// daysFromCivil returns days since 1970-01-01 of y-m-d.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if y < 0 {
		era = y - 399
	}
	era /= 400
	yoe := y - era*400
	mp := m + 9
	if m > 2 {
		mp = m - 3
	}
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// floorDiv and floorMod divide rounding toward negative infinity.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// addMonthsDays adds months to a date, clamping the day to the end of the
// target month (2020-01-31 + 1 month = 2020-02-29), as Flink does.
func addMonthsDays(days, months int64) int64 {
	y, m, d := civil(days)
	t := y*12 + (m - 1) + months
	ny, nm := floorDiv(t, 12), floorMod(t, 12)+1
	d = min(d, daysInMonth(ny, nm))
	return daysFromCivil(ny, nm, d)
}

// addMonthsMicros adds months to a timestamp.
func addMonthsMicros(us, months int64) int64 {
	days := floorDiv(us, usPerDay)
	rest := us - days*usPerDay
	return addMonthsDays(days, months)*usPerDay + rest
}

// splitMicros returns days since epoch and micros within the day.
func splitMicros(us int64) (days, tod int64) {
	days = floorDiv(us, usPerDay)
	return days, us - days*usPerDay
}
