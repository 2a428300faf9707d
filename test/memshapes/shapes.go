package memshapes

import (
	"math"
	"time"
)

// Mi is a mebibyte.
const Mi = 1 << 20

// Shape is a container's working set over its life, and what the
// memory-leak rule must do with it.
type Shape struct {
	// Name is the shape's, in tables.
	Name string
	// What says what kind of app it stands for.
	What string
	// Limit is the container's memory limit in bytes.
	Limit int64
	// Leak is true for a shape the rule must recreate before its working
	// set reaches 90% of Limit, false for one it must never recreate.
	Leak bool
	// Kills is how many instances the kernel may kill for running out of
	// memory before that: a leak that reaches its limit within the rule's
	// minObservation is caught by the history its first instance leaves.
	Kills int
	// For is how long the shape is replayed.
	For time.Duration
	// Bytes is the working set at a moment of the container's life.
	Bytes func(Moment) int64
}

// Moment is a moment of a container's life.
type Moment struct {
	// Age is the time since the instance started; Instance counts the
	// instances before it (the kernel's restarts).
	Age      time.Duration
	Instance int
	// Seed draws the noise: each seed is another replay of the shape.
	Seed uint64
}

// part is a working set's component, in bytes, at a moment.
type part func(Moment) float64

// sum is the working set made of parts, never below a mebibyte.
func sum(parts ...part) func(Moment) int64 {
	return func(m Moment) int64 {
		var b float64
		for _, p := range parts {
			b += p(m)
		}
		return int64(max(b, Mi))
	}
}

// first is a part of the first instance only.
func first(p part) part {
	return func(m Moment) float64 {
		if m.Instance > 0 {
			return 0
		}
		return p(m)
	}
}

// flat is a constant working set.
func flat(bytes float64) part {
	return func(Moment) float64 { return bytes }
}

// leak grows perHour bytes an hour from its start on.
func leak(perHour float64, start time.Duration) part {
	return func(m Moment) float64 {
		age := m.Age
		if age <= start {
			return 0
		}
		return perHour * (age - start).Hours()
	}
}

// warmUp is a cache filling or a heap growing to its size: size bytes
// reached along a saturating curve of time constant tau (63% after tau,
// 95% after three).
func warmUp(size float64, tau time.Duration) part {
	return func(m Moment) float64 {
		age := m.Age
		return size * (1 - math.Exp(-age.Seconds()/tau.Seconds()))
	}
}

// sawtooth is a garbage-collected heap: height bytes allocated at an even
// rate over each period, freed at its end.
func sawtooth(height float64, period time.Duration) part {
	return func(m Moment) float64 {
		age := m.Age
		return height * math.Mod(age.Seconds(), period.Seconds()) / period.Seconds()
	}
}

// step is a one-time growth of size bytes over ramp, from at on.
func step(size float64, at, ramp time.Duration) part {
	return func(m Moment) float64 {
		age := m.Age
		switch {
		case age <= at:
			return 0
		case age >= at+ramp:
			return size
		}
		return size * (age - at).Seconds() / ramp.Seconds()
	}
}

// staircase grows by size at once every period.
func staircase(size float64, period time.Duration) part {
	return func(m Moment) float64 {
		age := m.Age
		return size * math.Floor(age.Seconds()/period.Seconds())
	}
}

// daily is memory that follows the day's traffic: swing bytes more at the
// afternoon's peak than at night's low, along a sine, starting at the low.
func daily(swing float64) part {
	return func(m Moment) float64 {
		return swing * (1 - math.Cos(2*math.Pi*m.Age.Hours()/24)) / 2
	}
}

// bursts are size bytes held for lasting, every period.
func bursts(size float64, period, lasting time.Duration) part {
	return func(m Moment) float64 {
		age := m.Age
		if math.Mod(age.Seconds(), period.Seconds()) < lasting.Seconds() {
			return size
		}
		return 0
	}
}

// noise is an even jitter of up to amplitude bytes either way, the same
// at the same age and seed.
func noise(amplitude float64) part {
	return func(m Moment) float64 {
		x := mix(uint64(m.Age/time.Second) ^ m.Seed<<40 ^ uint64(m.Instance)<<32)
		return amplitude * (2*float64(x>>11)/float64(1<<53) - 1)
	}
}

// mix is splitmix64's finaliser: a well-spread hash of x, so that nearby
// seconds and seeds draw unrelated values.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Catalogue is every shape, leaks first.
func Catalogue() []Shape {
	const day = 24 * time.Hour
	return []Shape{
		{Name: "leak-fast", What: "leaks 300Mi/h from the start", Limit: 512 * Mi, Leak: true, For: 4 * time.Hour,
			Bytes: sum(flat(100*Mi), leak(300*Mi, 0), noise(2*Mi))},
		{Name: "leak-60Mi/h", What: "leaks 60Mi/h from the start", Limit: 512 * Mi, Leak: true, For: 12 * time.Hour,
			Bytes: sum(flat(100*Mi), leak(60*Mi, 0), noise(2*Mi))},
		{Name: "leak-20Mi/h", What: "leaks 20Mi/h (the default minGrowthPerHour) from the start", Limit: 512 * Mi, Leak: true, For: day,
			Bytes: sum(flat(100*Mi), leak(20*Mi, 0), noise(2*Mi))},
		{Name: "leak-slow", What: "leaks 8Mi/h, for a day and more", Limit: 512 * Mi, Leak: true, For: 3 * day,
			Bytes: sum(flat(100*Mi), leak(8*Mi, 0), noise(2*Mi))},
		{Name: "leak-sawtooth", What: "leaks 60Mi/h under a garbage collector freeing 30Mi every 3 minutes", Limit: 512 * Mi, Leak: true, For: 12 * time.Hour,
			Bytes: sum(flat(100*Mi), leak(60*Mi, 0), sawtooth(30*Mi, 3*time.Minute), noise(2*Mi))},
		{Name: "leak-tall-sawtooth", What: "leaks 120Mi/h under a garbage collector freeing 60Mi every 10 minutes", Limit: 768 * Mi, Leak: true, For: 12 * time.Hour,
			Bytes: sum(flat(150*Mi), leak(120*Mi, 0), sawtooth(60*Mi, 10*time.Minute), noise(2*Mi))},
		{Name: "leak-staircase", What: "leaks 15Mi at once every 15 minutes (a batch's leftovers)", Limit: 512 * Mi, Leak: true, For: 12 * time.Hour,
			Bytes: sum(flat(100*Mi), staircase(15*Mi, 15*time.Minute), noise(2*Mi))},
		{Name: "leak-oom-fast", What: "leaks 600Mi/h, out of memory after 41 minutes, again in every instance", Limit: 512 * Mi, Leak: true, Kills: 1, For: 4 * time.Hour,
			Bytes: sum(flat(100*Mi), leak(600*Mi, 0), noise(2*Mi))},
		{Name: "leak-late", What: "flat for 5 hours, then leaks 100Mi/h", Limit: 512 * Mi, Leak: true, For: 12 * time.Hour,
			Bytes: sum(flat(150*Mi), leak(100*Mi, 5*time.Hour), noise(2*Mi))},
		{Name: "leak-after-warm-up", What: "warms up by 150Mi (time constant 5m) and leaks 40Mi/h", Limit: 512 * Mi, Leak: true, For: 12 * time.Hour,
			Bytes: sum(flat(60*Mi), warmUp(150*Mi, 5*time.Minute), leak(40*Mi, 0), noise(2*Mi))},

		{Name: "flat", What: "holds 200Mi, jittering 4Mi", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(200*Mi), noise(4*Mi))},
		{Name: "warm-up-25Mi-2m", What: "warms up by 25Mi, time constant 2m", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(60*Mi), warmUp(25*Mi, 2*time.Minute), noise(1*Mi))},
		{Name: "warm-up-150Mi-2m", What: "a cache filling by 150Mi, time constant 2m", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(60*Mi), warmUp(150*Mi, 2*time.Minute), noise(1*Mi))},
		{Name: "warm-up-300Mi-15m", What: "a heap growing by 300Mi, time constant 15m", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(60*Mi), warmUp(300*Mi, 15*time.Minute), noise(2*Mi))},
		{Name: "warm-up-200Mi-30m", What: "a cache filling by 200Mi, time constant 30m", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(60*Mi), warmUp(200*Mi, 30*time.Minute), noise(2*Mi))},
		{Name: "warm-up-400Mi-45m", What: "a JVM heap growing by 400Mi, time constant 45m", Limit: 1024 * Mi, For: 12 * time.Hour,
			Bytes: sum(flat(100*Mi), warmUp(400*Mi, 45*time.Minute), noise(2*Mi))},
		{Name: "warm-up-400Mi-60m", What: "a JVM heap growing by 400Mi, time constant 1h", Limit: 1024 * Mi, For: 12 * time.Hour,
			Bytes: sum(flat(100*Mi), warmUp(400*Mi, time.Hour), noise(2*Mi))},
		{Name: "warm-up-near-limit", What: "warms up to 86% of its limit, time constant 10m", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(60*Mi), warmUp(380*Mi, 10*time.Minute), noise(2*Mi))},
		{Name: "garbage-churn", What: "a garbage collector freeing 100Mi every 2 minutes", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(150*Mi), sawtooth(100*Mi, 2*time.Minute), noise(2*Mi))},
		{Name: "garbage-churn-slow", What: "a garbage collector freeing 150Mi every 20 minutes", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(150*Mi), sawtooth(150*Mi, 20*time.Minute), noise(2*Mi))},
		{Name: "step", What: "grows by 100Mi at once after 3 hours, then holds", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(150*Mi), step(100*Mi, 3*time.Hour, 0), noise(2*Mi))},
		{Name: "step-ramp", What: "grows by 100Mi over 10 minutes after 3 hours, then holds", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(150*Mi), step(100*Mi, 3*time.Hour, 10*time.Minute), noise(2*Mi))},
		{Name: "load-100Mi-20m-at-30m", What: "loads 100Mi over 20 minutes from 30 minutes on (a cache filled on first traffic), then holds", Limit: 512 * Mi, For: 4 * time.Hour,
			Bytes: sum(flat(150*Mi), step(100*Mi, 30*time.Minute, 20*time.Minute), noise(2*Mi))},
		{Name: "load-50Mi-10m-at-45m", What: "loads 50Mi over 10 minutes from 45 minutes on, then holds", Limit: 512 * Mi, For: 4 * time.Hour,
			Bytes: sum(flat(150*Mi), step(50*Mi, 45*time.Minute, 10*time.Minute), noise(2*Mi))},
		{Name: "load-25Mi-5m-at-1h", What: "loads 25Mi over 5 minutes after an hour, then holds", Limit: 512 * Mi, For: 4 * time.Hour,
			Bytes: sum(flat(150*Mi), step(25*Mi, time.Hour, 5*time.Minute), noise(2*Mi))},
		{Name: "load-200Mi-15m-at-2h", What: "loads 200Mi over 15 minutes after 2 hours, then holds", Limit: 512 * Mi, For: 5 * time.Hour,
			Bytes: sum(flat(150*Mi), step(200*Mi, 2*time.Hour, 15*time.Minute), noise(2*Mi))},
		{Name: "load-150Mi-20m-at-3h10m", What: "loads 150Mi over 20 minutes after 3 hours 10 minutes, then holds", Limit: 512 * Mi, For: 6 * time.Hour,
			Bytes: sum(flat(150*Mi), step(150*Mi, 3*time.Hour+10*time.Minute, 20*time.Minute), noise(2*Mi))},
		{Name: "load-280Mi-20m-at-50m", What: "loads 280Mi over 20 minutes from 50 minutes on, to 84% of its limit, then holds", Limit: 512 * Mi, For: 4 * time.Hour,
			Bytes: sum(flat(150*Mi), step(280*Mi, 50*time.Minute, 20*time.Minute), noise(2*Mi))},
		{Name: "daily-traffic-100Mi", What: "follows the day's traffic: 100Mi more at the afternoon's peak than at night (13Mi/h at most)", Limit: 512 * Mi, For: 3 * day,
			Bytes: sum(flat(200*Mi), daily(100*Mi), noise(2*Mi))},
		{Name: "daily-traffic-300Mi", What: "follows the day's traffic: 300Mi more at the afternoon's peak than at night (39Mi/h at most)", Limit: 1024 * Mi, For: 3 * day,
			Bytes: sum(flat(200*Mi), daily(300*Mi), noise(2*Mi))},
		{Name: "warm-up-300Mi-2h", What: "a heap growing by 300Mi, time constant 2h", Limit: 1024 * Mi, For: 12 * time.Hour,
			Bytes: sum(flat(100*Mi), warmUp(300*Mi, 2*time.Hour), noise(2*Mi))},
		{Name: "burst-oom", What: "holds 150Mi; a burst of 400Mi after 20 minutes kills its first instance, the next holds", Limit: 512 * Mi, Kills: 1, For: 8 * time.Hour,
			Bytes: sum(flat(150*Mi), first(step(400*Mi, 20*time.Minute, 0)), noise(2*Mi))},
		{Name: "bursts", What: "holds 150Mi, with 200Mi more for a minute every 15 minutes", Limit: 512 * Mi, For: 8 * time.Hour,
			Bytes: sum(flat(150*Mi), bursts(200*Mi, 15*time.Minute, time.Minute), noise(2*Mi))},
	}
}
