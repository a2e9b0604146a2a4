package delivery

import "time"

// Provider names a provider whose webhooks the queue sends; it picks the retry schedule.
type Provider string

// The providers the sandbox has.
const (
	Pspx Provider = "pspx"
	Pspy Provider = "pspy"
)

// Schedule is the waits before each retry, in provider time: Schedule[0] separates the first
// attempt from the second. A delivery whose last scheduled retry fails has failed for good, so a
// schedule of n waits allows n+1 attempts.
type Schedule []time.Duration

// Total is how long after the first attempt the last one is made.
func (s Schedule) Total() time.Duration {
	var t time.Duration
	for _, w := range s {
		t += w
	}
	return t
}

// PspxSchedule is exponential backoff as pspx retries: the first retry a minute after the first
// attempt, each wait twice the one before up to twelve hours, for as long as the retry still
// falls within three days of the first attempt. That is 14 retries: after 1, 2, 4, 8, 16, 32, 64,
// 128, 256 and 512 minutes (the 11th attempt comes 17 h 03 min after the first), then four times
// 12 h, the last attempt 65 h 03 min after the first (one more wait would pass 72 h).
var PspxSchedule = backoff(time.Minute, 12*time.Hour, 72*time.Hour)

// PspySchedule is pspy's: ten attempts in all, spread over about 26 hours. The nine retries come
// 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 4 h, 8 h and 10 h after the attempt before, the last
// attempt 25 h 51 min after the first.
var PspySchedule = Schedule{
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 10 * time.Hour,
}

// backoff doubles the wait from first up to limit, for as many retries as fit within horizon.
func backoff(first, limit, horizon time.Duration) Schedule {
	var s Schedule
	var at time.Duration
	for w := first; at+w <= horizon; w = min(2*w, limit) {
		s = append(s, w)
		at += w
	}
	return s
}

// schedules maps each provider to its retry schedule.
var schedules = map[Provider]Schedule{Pspx: PspxSchedule, Pspy: PspySchedule}
