package server

// Differential tests of the GEO commands: the same commands to a real
// redis-server and to our server (on four event loops), reply for reply,
// in RESP2 and RESP3 (compat_test.go), and go-redis's GEO calls against
// both.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

const sicily = "GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania"

func compatGeoScripts() []compatScript {
	return []compatScript{
		{name: "geoadd", steps: []compatStep{
			cs(sicily), cs(sicily), cs("ZRANGE Sicily 0 -1 WITHSCORES"), cs("TYPE Sicily"),
			cs("GEOADD Sicily CH 13.361389 38.115556 Palermo 15 37 Catania 14 37 Agrigento"),
			cs("GEOADD Sicily NX 1 1 Palermo 2 2 new"), cs("GEOADD Sicily XX 1 1 Palermo 2 2 other"),
			cs("GEOADD Sicily XX CH 3 3 Palermo"), cs("GEOADD Sicily ch nx 4 4 x"), cs("GEOADD Sicily NX XX 1 1 a"),
			cs("GEOADD Sicily GT 1 1 a"), cs("GEOADD Sicily GT 1 a"), cs("GEOADD Sicily NX NX NX"), cs("GEOADD Sicily 1 1"),
			cs("GEOADD Sicily 1 1 a 2"), cs("GEOADD Sicily 200 1 a"), cs("GEOADD Sicily 1 86 a"), cs("GEOADD Sicily -180.1 1 a"),
			cs("GEOADD Sicily 1 -85.06 a"), cs("GEOADD Sicily inf 1 a"), cs("GEOADD Sicily 1 -inf a"), cs("GEOADD Sicily x 1 a"),
			cs("GEOADD Sicily 1 nan a"), cs("GEOADD Sicily 1 1 a 1e300 1 b"), cs("GEOADD Sicily 1 1 ok 500 1 bad"), cs("ZSCORE Sicily ok"),
			cs("GEOADD Sicily 180 85.05112878 ne -180 -85.05112878 sw 0 0 zero 1 1 dup 2 2 dup"),
			cs("ZRANGE Sicily 0 -1 WITHSCORES"), cs("GEOPOS Sicily ne sw zero dup"),
			cs("SET str v"), cs("GEOADD str 1 1 a"), cs("GEOADD str 200 1 a"), cs("GEOADD str 1 1"),
			cs("GEOADD big 1 1 " + strings.Repeat("x", 70)), cs("OBJECT ENCODING big"),
		}},
		{name: "pos-hash-dist", steps: []compatStep{
			cs(sicily), cs("GEOADD Sicily 180 85.05112878 ne -180 -85.05112878 sw 0 0 zero"),
			cs("GEOPOS Sicily Palermo Catania nope ne sw zero"), cs("GEOPOS Sicily"), cs("GEOPOS nokey a b"),
			cs("GEOHASH Sicily Palermo Catania nope ne sw zero"), cs("GEOHASH Sicily"), cs("GEOHASH nokey a"),
			cs("GEODIST Sicily Palermo Catania"), cs("GEODIST Sicily Palermo Catania km"), cs("GEODIST Sicily Palermo Catania KM"),
			cs("GEODIST Sicily Palermo Catania mi"), cs("GEODIST Sicily Palermo Catania Ft"), cs("GEODIST Sicily Palermo Catania m"),
			cs("GEODIST Sicily Palermo Palermo"), cs("GEODIST Sicily ne sw km"), cs("GEODIST Sicily Palermo nope"),
			cs("GEODIST Sicily nope Palermo"), cs("GEODIST nokey a b"), cs("GEODIST Sicily Palermo Catania yd"),
			cs("GEODIST Sicily Palermo Catania km x"), cs("GEODIST nokey a b yd"),
			cs("SET str v"), cs("GEOPOS str a"), cs("GEOHASH str a"), cs("GEODIST str a b"), cs("GEODIST str a b yd"),
			cs("ZADD z -1 neg 1e300 huge 4503599627370496 top nan_is_refused"), cs("ZADD z -1 neg 1e300 huge 4503599627370496 top"),
			cs("GEOPOS z neg huge top"), cs("GEOHASH z neg huge top"), cs("GEODIST z neg huge"),
			cs("GEORADIUS z 0 0 20000 km WITHHASH WITHCOORD"),
		}},
		{name: "search", steps: []compatStep{
			cs(sicily), cs("GEOADD Sicily 13.583333 37.316667 Agrigento 12.758489 38.788135 edge1 17.241510 38.788135 edge2"),
			cs("GEORADIUS Sicily 15 37 200 km"), cs("GEORADIUS Sicily 15 37 200 km ASC"), cs("GEORADIUS Sicily 15 37 200 km DESC"),
			cs("GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH"), cs("GEORADIUS Sicily 15 37 200 km withhash withdist"),
			cs("GEORADIUS Sicily 15 37 200 KM COUNT 1"), cs("GEORADIUS Sicily 15 37 200 km COUNT 2 DESC WITHDIST"),
			cs("GEORADIUS Sicily 15 37 200 km COUNT 1 ANY"), cs("GEORADIUS Sicily 15 37 200 km COUNT 2 ANY ASC"),
			cs("GEORADIUS Sicily 15 37 200 km COUNT 100"), cs("GEORADIUS Sicily 15 37 1 km"), cs("GEORADIUS Sicily 15 37 0 km"),
			cs("GEORADIUS Sicily 15 37 200 mi"), cs("GEORADIUS Sicily 15 37 200000 ft WITHDIST"), cs("GEORADIUS Sicily 15 37 5000000 km"),
			cs("GEORADIUS_RO Sicily 15 37 200 km WITHDIST"), cs("GEORADIUSBYMEMBER Sicily Palermo 200 km WITHDIST"),
			cs("GEORADIUSBYMEMBER_RO Sicily Palermo 100 km"), cs("GEORADIUSBYMEMBER Sicily nope 100 km"),
			cs("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST WITHCOORD"),
			cs("GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km ASC WITHDIST"),
			cs("GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 100 km DESC WITHHASH"),
			cs("GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1000 1000 km COUNT 2 WITHDIST"),
			cs("GEOSEARCH Sicily frommember Palermo frommember Catania byradius 100 km"),
			cs("GEOSEARCH Sicily FROMLONLAT 179.9 0 BYBOX 2000 2000 km"), cs("GEOSEARCH Sicily FROMLONLAT 0 84 BYRADIUS 20000 km COUNT 3"),
			cs("GEOSEARCH nokey FROMLONLAT 15 37 BYRADIUS 200 km"), cs("GEOSEARCH nokey FROMMEMBER x BYRADIUS 200 km"),
			cs("GEORADIUSBYMEMBER nokey x 200 km"), cs("GEORADIUSBYMEMBER nokey x bad km"), cs("GEORADIUS nokey 1 1 1 km"),
		}},
		{name: "search-errors", steps: []compatStep{
			cs(sicily), cs("SET str v"),
			cs("GEORADIUS str 1 1 1 km"), cs("GEORADIUS str 200 1 1 km"), cs("GEORADIUS str 1 1 1 km BAD"),
			cs("GEOSEARCH str FROMLONLAT 1 1 BYRADIUS 1 km"), cs("GEOSEARCHSTORE d str FROMLONLAT 1 1 BYRADIUS 1 km"),
			cs("GEORADIUS Sicily 200 1 1 km"), cs("GEORADIUS Sicily x 1 1 km"), cs("GEORADIUS Sicily 1 1 x km"),
			cs("GEORADIUS Sicily 1 1 -1 km"), cs("GEORADIUS Sicily 1 1 1 yd"), cs("GEORADIUS Sicily 1 1 1 km COUNT"),
			cs("GEORADIUS Sicily 1 1 1 km COUNT x"), cs("GEORADIUS Sicily 1 1 1 km COUNT 0"), cs("GEORADIUS Sicily 1 1 1 km COUNT -1"),
			cs("GEORADIUS Sicily 1 1 1 km ANY"), cs("GEORADIUS Sicily 1 1 1 km STORE"), cs("GEORADIUS Sicily 1 1 1 km STORE d WITHDIST"),
			cs("GEORADIUS_RO Sicily 1 1 1 km STORE d"), cs("GEORADIUS Sicily 1 1 1 km FROMMEMBER Palermo"),
			cs("GEORADIUSBYMEMBER Sicily nope x km"), cs("GEORADIUSBYMEMBER Sicily Palermo x km"), cs("GEORADIUSBYMEMBER Sicily Palermo 1 km STOREDIST d WITHHASH"),
			cs("GEOSEARCH Sicily BYRADIUS 1 km"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 COUNT 1"),
			cs("Geosearch Sicily byradius 1 km asc"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 FROMMEMBER Palermo BYRADIUS 1 km"),
			cs("GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 1 1 BYRADIUS 1 km"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYRADIUS 1 km BYBOX 1 1 km"),
			cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 1 km BYRADIUS 1 km"), cs("GEOSEARCH Sicily FROMMEMBER nope BYRADIUS x km"),
			cs("GEOSEARCH Sicily BYRADIUS x km FROMMEMBER nope"), cs("GEOSEARCH nokey FROMMEMBER nope BYRADIUS x km"),
			cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX x 1 km"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 x km"),
			cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX -1 1 km"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 1 yd"),
			cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYBOX 1 1"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYRADIUS 1"),
			cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYRADIUS 1 km STORE d"), cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYRADIUS 1 km STOREDIST"),
			cs("GEOSEARCH Sicily FROMLONLAT 1 1 BYRADIUS 1 km ANY"), cs("GEOSEARCH Sicily FROMLONLAT 1 99 BYRADIUS 1 km"),
			cs("GEOSEARCHSTORE d Sicily FROMLONLAT 1 1 BYRADIUS 1 km WITHDIST"), cs("GEOSEARCHSTORE d Sicily FROMLONLAT 1 1 BYRADIUS 1 km STORE x"),
			cs("GEOSEARCHSTORE d Sicily FROMMEMBER nope BYRADIUS 1 km"), cs("EXISTS d"),
		}},
		{name: "store", steps: []compatStep{
			cs(sicily), cs("GEOADD Sicily 13.583333 37.316667 Agrigento"), cs("SET d v"), cs("SET d2 v"),
			cs("GEORADIUS Sicily 15 37 200 km STORE d"), cs("TYPE d"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("GEORADIUS Sicily 15 37 200 km STOREDIST d"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("GEORADIUS Sicily 15 37 200 km STORE d STOREDIST d2"), cs("ZRANGE d2 0 -1 WITHSCORES"),
			cs("GEORADIUS Sicily 15 37 500 km COUNT 2 DESC STOREDIST d"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("GEORADIUSBYMEMBER Sicily Palermo 500 mi STOREDIST d"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("GEOSEARCHSTORE d Sicily FROMMEMBER Catania BYBOX 500 500 km STOREDIST"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("GEOSEARCHSTORE d Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1"), cs("ZRANGE d 0 -1 WITHSCORES"),
			cs("GEOSEARCHSTORE d Sicily FROMLONLAT 0 0 BYRADIUS 1 km"), cs("EXISTS d"),
			cs("GEOSEARCHSTORE d Sicily FROMLONLAT 0 0 BYRADIUS 1 km"), cs("SET d v"), cs("GEOSEARCHSTORE d nokey FROMLONLAT 0 0 BYRADIUS 1 km"),
			cs("EXISTS d"), cs("SET d v"), cs("GEORADIUS nokey 0 0 1 km STORE d"), cs("EXISTS d"),
			cs("SET d v EX 100"), cs("GEORADIUS Sicily 15 37 200 km STORE d"), cs("TTL d"),
			cs("GEOSEARCHSTORE Sicily Sicily FROMLONLAT 15 37 BYRADIUS 150 km"), cs("ZRANGE Sicily 0 -1 WITHSCORES"),
			cs("GEORADIUS Sicily 15 37 200 km STORE Sicily"), cs("ZRANGE Sicily 0 -1 WITHSCORES"),
			ca("EVAL", "return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km', 'STORE', KEYS[2])", "2", "Sicily", "e"),
			ca("EVAL", "return redis.call('GEOSEARCH', KEYS[1], 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'WITHCOORD', 'WITHDIST')", "1", "Sicily"),
			ca("EVAL", "redis.setresp(3); return redis.call('GEOPOS', KEYS[1], 'Catania', 'nope')", "1", "Sicily"),
			ca("EVAL_RO", "return redis.call('GEORADIUS', KEYS[1], 15, 37, 200, 'km')", "1", "Sicily"),
			ca("EVAL_RO", "return redis.call('GEORADIUS_RO', KEYS[1], 15, 37, 200, 'km')", "1", "Sicily"),
			cs("MULTI"), cs("GEOADD m 1 1 a"), cs("GEOSEARCHSTORE m2 m FROMMEMBER a BYRADIUS 1 km"), cs("GEOPOS m2 a"), cs("EXEC"),
		}},
		{name: "ties-and-poles", steps: []compatStep{
			cs("GEOADD t 0 0 a 0 0 b 0 0 c 1 1 d 1 1 e -1 -1 f -1 -1 g 1 -1 h -1 1 i 0 1 j 1 0 k 0 -1 l -1 0 m 2 2 n 2 2 o"),
			cs("GEORADIUS t 0 0 500 km ASC"), cs("GEORADIUS t 0 0 500 km DESC"), cs("GEORADIUS t 0 0 500 km COUNT 3"),
			cs("GEORADIUS t 0 0 500 km COUNT 5 DESC"), cs("GEORADIUS t 0 0 500 km COUNT 9 WITHDIST"), cs("GEORADIUS t 0 0 500 km COUNT 3 ANY"),
			cs("GEORADIUS t 0.5 0.5 500 km COUNT 8 WITHDIST"), cs("GEOSEARCH t FROMLONLAT 0 0 BYBOX 250 250 km COUNT 4 DESC"),
			cs("GEOADD p 0 85 n1 90 85 n2 180 85 n3 -90 85 n4 0 -85 s1 180 -85 s2 179.9 0 e1 -179.9 0 w1"),
			cs("GEORADIUS p 0 85 3000 km WITHDIST"), cs("GEORADIUS p 0 -85 3000 km WITHDIST"), cs("GEORADIUS p 180 0 100 km WITHDIST"),
			cs("GEOSEARCH p FROMLONLAT 180 0 BYBOX 200 200 km WITHDIST"), cs("GEORADIUS p 0 0 50000 km"), cs("GEORADIUS p 0 0 1e10 km"),
			cs("GEORADIUS p 0 0 1e300 km COUNT 2"), cs("GEORADIUS p 0 0 0.0001 m"),
		}},
	}
}

func TestCompatGeo(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatGeoScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatGeoRandom adds points on a coarse grid, so that many share a
// position and so a distance, to a set held as a listpack and one past
// the limit, and compares random searches of every kind: replies with
// every option, COUNT's partial sort with its ties, and the STORE form's
// set. STOREDIST's full-precision distances are compared by the scripts
// above only: the last bit of a distance may differ from glibc's in about
// one case in a few hundred (see internal/geo).
func TestCompatGeoRandom(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	rng := rand.New(rand.NewPCG(7, 11))
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		p.flush(t)
		var steps []compatStep
		for _, key := range []struct {
			name string
			n    int
		}{{"small", 60}, {"big", 400}} {
			args := []string{"GEOADD", key.name}
			for i := range key.n {
				lon := -20 + float64(rng.IntN(40))*0.75
				lat := 30 + float64(rng.IntN(40))*0.5
				args = append(args, fmt.Sprint(lon), fmt.Sprint(lat), fmt.Sprintf("m%d", i))
			}
			steps = append(steps, ca(args...), ca("OBJECT", "ENCODING", key.name))
		}
		for range 400 {
			key := []string{"small", "big"}[rng.IntN(2)]
			var from, by []string
			if rng.IntN(3) == 0 {
				from = []string{"FROMMEMBER", fmt.Sprintf("m%d", rng.IntN(60))}
			} else {
				from = []string{"FROMLONLAT", fmt.Sprint(-25 + rng.Float64()*40), fmt.Sprint(25 + rng.Float64()*30)}
			}
			unit := []string{"m", "km", "mi", "ft"}[rng.IntN(4)]
			scale := map[string]float64{"m": 1000, "km": 1, "mi": 0.6, "ft": 3280}[unit]
			if rng.IntN(2) == 0 {
				by = []string{"BYRADIUS", fmt.Sprint(rng.Float64() * 1500 * scale), unit}
			} else {
				by = []string{"BYBOX", fmt.Sprint(rng.Float64() * 2500 * scale), fmt.Sprint(rng.Float64() * 2500 * scale), unit}
			}
			var opts []string
			switch rng.IntN(3) {
			case 0:
				opts = append(opts, "ASC")
			case 1:
				opts = append(opts, "DESC")
			}
			if rng.IntN(2) == 0 {
				opts = append(opts, "COUNT", fmt.Sprint(1+rng.IntN(60)))
				if rng.IntN(4) == 0 {
					opts = append(opts, "ANY")
				}
			}
			search := append(append(append([]string{"GEOSEARCH", key}, from...), by...), opts...)
			for _, w := range []string{"WITHDIST", "WITHHASH", "WITHCOORD"} {
				if rng.IntN(2) == 0 {
					search = append(search, w)
				}
			}
			store := append(append(append([]string{"GEOSEARCHSTORE", "dst", key}, from...), by...), opts...)
			steps = append(steps, ca(search...), ca(store...), ca("ZRANGE", "dst", "0", "-1", "WITHSCORES"))
			if by[0] == "BYRADIUS" && from[0] == "FROMMEMBER" {
				steps = append(steps, ca(append(append([]string{"GEORADIUSBYMEMBER", key, from[1]}, by[1:]...), append(opts, "WITHDIST")...)...))
			}
		}
		runCompatSteps(t, p, compatScript{name: "random searches", steps: steps})
	})
}

// TestCompatGeoGoRedis runs go-redis's GEO calls, with its default
// options, against both servers and compares what it parses.
func TestCompatGeoGoRedis(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	ctx := context.Background()
	run := func(addr string) []any {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		if err := c.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		var out []any
		add := func(v any, err error) { out = append(out, v, fmt.Sprint(err)) }
		add(c.GeoAdd(ctx, "Sicily",
			&redis.GeoLocation{Name: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
			&redis.GeoLocation{Name: "Catania", Longitude: 15.087269, Latitude: 37.502669},
			&redis.GeoLocation{Name: "Agrigento", Longitude: 13.583333, Latitude: 37.316667}).Result())
		add(c.GeoAdd(ctx, "Sicily", &redis.GeoLocation{Name: "bad", Longitude: 200, Latitude: 1}).Result())
		add(c.GeoPos(ctx, "Sicily", "Palermo", "nope").Result())
		add(c.GeoHash(ctx, "Sicily", "Palermo", "Catania").Result())
		add(c.GeoDist(ctx, "Sicily", "Palermo", "Catania", "km").Result())
		add(c.GeoRadius(ctx, "Sicily", 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", WithCoord: true, WithDist: true, WithGeoHash: true, Sort: "ASC"}).Result())
		add(c.GeoRadius(ctx, "Sicily", 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", Count: 1}).Result())
		add(c.GeoRadiusStore(ctx, "Sicily", 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", Store: "dst"}).Result())
		add(c.GeoRadiusByMember(ctx, "Sicily", "Palermo", &redis.GeoRadiusQuery{Radius: 100, Unit: "km", WithDist: true}).Result())
		add(c.GeoSearch(ctx, "Sicily", &redis.GeoSearchQuery{Member: "Palermo", BoxWidth: 400, BoxHeight: 400, BoxUnit: "km", Sort: "DESC"}).Result())
		add(c.GeoSearchLocation(ctx, "Sicily", &redis.GeoSearchLocationQuery{
			GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km", Sort: "ASC", Count: 2},
			WithCoord:      true, WithDist: true, WithHash: true}).Result())
		add(c.GeoSearchStore(ctx, "Sicily", "dst2", &redis.GeoSearchStoreQuery{
			GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km"}, StoreDist: true}).Result())
		add(c.ZRangeWithScores(ctx, "dst2", 0, -1).Result())
		add(c.GeoSearch(ctx, "Sicily", &redis.GeoSearchQuery{Member: "nope", Radius: 1, RadiusUnit: "km"}).Result())
		return out
	}
	want, got := run(redisAddr), run(ts.addr)
	if !reflect.DeepEqual(want, got) {
		for i := range want {
			if i >= len(got) || !reflect.DeepEqual(want[i], got[i]) {
				t.Errorf("call %d:\n\tredis: %#v\n\tours:  %#v", i/2, want[i], got[i])
			}
		}
	}
}
