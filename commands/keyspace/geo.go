package keyspace

import (
	"errors"
	"math"
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/commands/keyspace/internal/geo"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The GEO commands (Redis's geo.c). A GEO key is a sorted set whose
// scores are 52-bit geohashes (internal/geo), so TYPE, ZRANGE and the
// rest see a zset, as in Redis. Arguments are read in Redis's order,
// with its error texts: the source key's type first, then each argument
// as it comes, a member named as the center looked up as it is read. A
// search reads its source at one instant (Store.ZRead); its STORE forms
// read it and replace the destination as one operation
// (Store.ZStoreFrom).

// geoErr is a search's error reply, the text as written.
type geoErr string

func (e geoErr) Error() string { return string(e) }

const (
	errGeoMember = geoErr("ERR could not decode requested zset member")
	errGeoUnit   = geoErr("ERR unsupported unit provided. please use M, KM, FT, MI")
)

// geoFloat reads a number as Redis's getDoubleFromObjectOrReply, replying
// msg (or the usual text) when it does not parse.
func geoFloat(b []byte, msg geoErr) (float64, error) {
	v, ok := parseScore(b)
	if !ok {
		if msg == "" {
			msg = commands.ErrNotFloat
		}
		return 0, msg
	}
	return v, nil
}

// geoLonLat reads a longitude and a latitude within Redis's limits
// (extractLongLatOrReply).
func geoLonLat(lonArg, latArg []byte) (lon, lat float64, err error) {
	if lon, err = geoFloat(lonArg, ""); err != nil {
		return 0, 0, err
	}
	if lat, err = geoFloat(latArg, ""); err != nil {
		return 0, 0, err
	}
	if lon < geo.LonMin || lon > geo.LonMax || lat < geo.LatMin || lat > geo.LatMax {
		return 0, 0, geoErr("ERR invalid longitude,latitude pair " + cFloat(lon) + "," + cFloat(lat))
	}
	return lon, lat, nil
}

// cFloat is printf's %f.
func cFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// geoUnit is how many meters make one of unit (extractUnitOrReply).
func geoUnit(unit []byte) (float64, error) {
	switch {
	case resp.EqualFold(unit, "m"):
		return 1, nil
	case resp.EqualFold(unit, "km"):
		return 1000, nil
	case resp.EqualFold(unit, "ft"):
		return 0.3048, nil
	case resp.EqualFold(unit, "mi"):
		return 1609.34, nil
	}
	return 0, errGeoUnit
}

// geoRadius reads "radius unit" into s (extractDistanceOrReply).
func geoRadius(s *geo.Shape, args [][]byte) error {
	r, err := geoFloat(args[0], "ERR need numeric radius")
	if err != nil {
		return err
	}
	if r < 0 {
		return geoErr("ERR radius cannot be negative")
	}
	conv, err := geoUnit(args[1])
	if err != nil {
		return err
	}
	s.Box, s.Radius, s.Conversion = false, r, conv
	return nil
}

// geoBox reads "width height unit" into s (extractBoxOrReply).
func geoBox(s *geo.Shape, args [][]byte) error {
	w, err := geoFloat(args[0], "ERR need numeric width")
	if err != nil {
		return err
	}
	h, err := geoFloat(args[1], "ERR need numeric height")
	if err != nil {
		return err
	}
	if h < 0 || w < 0 {
		return geoErr("ERR height or width cannot be negative")
	}
	conv, err := geoUnit(args[2])
	if err != nil {
		return err
	}
	s.Box, s.Width, s.Height, s.Conversion = true, w, h, conv
	return nil
}

// cmdGeoAdd implements GEOADD key [NX|XX] [CH] longitude latitude member
// [longitude latitude member ...]: Redis turns it into a ZADD of the
// positions' scores, whose event ("zadd") and reply it has.
func cmdGeoAdd(c *commands.Ctx, args [][]byte) {
	opts, ch, rest := zaddOptions(args, false)
	// No triple left is ZADD's syntax error.
	if len(rest)%3 != 0 || len(rest) == 0 || opts.NX && opts.XX {
		c.W.Error(commands.ErrSyntax)
		return
	}
	pairs := make([]engine.ScoreMember, len(rest)/3)
	for j := range pairs {
		lon, lat, err := geoLonLat(rest[3*j], rest[3*j+1])
		if err != nil {
			c.W.Error(err.Error())
			return
		}
		pairs[j] = engine.ScoreMember{Score: geo.Score(lon, lat), Member: rest[3*j+2]}
	}
	zaddPairs(c, args[1], opts, ch, pairs)
}

// cmdGeoHash implements GEOHASH key [member ...].
func cmdGeoHash(c *commands.Ctx, args [][]byte) {
	scores, found, err := c.Store.ZScore(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Array(len(scores))
	for i, s := range scores {
		if !found[i] {
			c.W.Null()
			continue
		}
		h := geo.Geohash(s)
		c.W.Bulk(h[:])
	}
}

// cmdGeoPos implements GEOPOS key [member ...].
func cmdGeoPos(c *commands.Ctx, args [][]byte) {
	scores, found, err := c.Store.ZScore(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Array(len(scores))
	for i, s := range scores {
		if !found[i] {
			c.W.NullArray()
			continue
		}
		lon, lat := geo.Decode(s)
		c.W.Array(2)
		writeCoordinate(c, lon)
		writeCoordinate(c, lat)
	}
}

// writeCoordinate writes a longitude or latitude as Redis does: a bulk
// string in RESP2, a double in RESP3, %.17Lf without trailing zeros in
// both.
func writeCoordinate(c *commands.Ctx, f float64) {
	var buf [48]byte
	text := geo.AppendCoordinate(buf[:0], f)
	if c.W.Protocol() == 3 {
		c.W.Raw(append(append([]byte{','}, text...), '\r', '\n'))
		return
	}
	c.W.Bulk(text)
}

// writeDistance writes a distance as Redis does, a bulk string of four
// decimals in either protocol.
func writeDistance(c *commands.Ctx, d float64) {
	var buf [48]byte
	c.W.Bulk(geo.AppendDistance(buf[:0], d))
}

// cmdGeoDist implements GEODIST key member1 member2 [M|KM|FT|MI]: the
// unit is read before the key, as Redis does.
func cmdGeoDist(c *commands.Ctx, args [][]byte) {
	toMeters := 1.0
	switch {
	case len(args) == 5:
		u, err := geoUnit(args[4])
		if err != nil {
			c.W.Error(err.Error())
			return
		}
		toMeters = u
	case len(args) > 5:
		c.W.Error(commands.ErrSyntax)
		return
	}
	scores, found, err := c.Store.ZScore(args[1], args[2:4])
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case !found[0] || !found[1]:
		c.W.Null()
	default:
		lon1, lat1 := geo.Decode(scores[0])
		lon2, lat2 := geo.Decode(scores[1])
		writeDistance(c, geo.Distance(lon1, lat1, lon2, lat2)/toMeters)
	}
}

// geoKind says which of georadiusGeneric's commands runs.
type geoKind uint8

const (
	geoRadiusCoords geoKind = 1 << iota // GEORADIUS: around a position
	geoRadiusMember                     // GEORADIUSBYMEMBER: around a member
	geoNoStore                          // the _RO forms: no STORE, no STOREDIST
	geoSearch                           // GEOSEARCH's arguments
	geoSearchStore                      // GEOSEARCHSTORE: its destination first
)

// The orders of a search's results.
const (
	geoUnsorted = iota
	geoAsc
	geoDesc
)

// geoQuery is a search as its arguments ask for it.
type geoQuery struct {
	shape                         geo.Shape
	withDist, withHash, withCoord bool
	order                         int
	any                           bool
	count                         int64
	store                         []byte // the destination, if any
	storeDist                     bool
}

// parseGeoQuery reads a search's arguments as georadiusGeneric does, in
// its order, so that of several bad arguments the one Redis reports is
// reported. score looks a member up in the source when it exists (nil
// when it does not): GEORADIUSBYMEMBER's center, and FROMMEMBER's where
// it comes, a missing member being an error then. Without a source Redis
// does not look the member up, nor read GEORADIUSBYMEMBER's radius.
func parseGeoQuery(args [][]byte, kind geoKind, score func([]byte) (float64, bool)) (q geoQuery, err error) {
	center := func(member []byte) error {
		s, ok := score(member)
		if !ok {
			return errGeoMember
		}
		q.shape.Lon, q.shape.Lat = geo.Decode(s)
		return nil
	}
	var base int
	switch {
	case kind&geoRadiusCoords != 0:
		base = 6
		if q.shape.Lon, q.shape.Lat, err = geoLonLat(args[2], args[3]); err != nil {
			return q, err
		}
		if err = geoRadius(&q.shape, args[4:6]); err != nil {
			return q, err
		}
	case kind&geoRadiusMember != 0:
		base = 5
		if score != nil {
			if err = center(args[2]); err != nil {
				return q, err
			}
			if err = geoRadius(&q.shape, args[3:5]); err != nil {
				return q, err
			}
		}
	case kind&geoSearchStore != 0:
		base = 3
		q.store = args[1]
	default:
		base = 2
	}
	search := kind&geoSearch != 0
	storable := kind&(geoNoStore|geoSearch) == 0
	var fromMember, fromLonLat, byRadius, byBox bool
	opts := args[base:]
	for i := 0; i < len(opts); i++ {
		left := len(opts) - i - 1 // arguments after this one
		switch a := opts[i]; {
		case resp.EqualFold(a, "withdist"):
			q.withDist = true
		case resp.EqualFold(a, "withhash"):
			q.withHash = true
		case resp.EqualFold(a, "withcoord"):
			q.withCoord = true
		case resp.EqualFold(a, "any"):
			q.any = true
		case resp.EqualFold(a, "asc"):
			q.order = geoAsc
		case resp.EqualFold(a, "desc"):
			q.order = geoDesc
		case resp.EqualFold(a, "count") && left >= 1:
			n, ok := resp.ParseInt(opts[i+1])
			if !ok {
				return q, geoErr(commands.ErrNotInteger)
			}
			if n <= 0 {
				return q, geoErr("ERR COUNT must be > 0")
			}
			q.count = n
			i++
		case resp.EqualFold(a, "store") && left >= 1 && storable:
			q.store, q.storeDist = opts[i+1], false
			i++
		case resp.EqualFold(a, "storedist") && left >= 1 && storable:
			q.store, q.storeDist = opts[i+1], true
			i++
		case resp.EqualFold(a, "storedist") && kind&geoSearchStore != 0:
			q.storeDist = true
		case resp.EqualFold(a, "frommember") && left >= 1 && search && !fromLonLat:
			if score != nil {
				if err = center(opts[i+1]); err != nil {
					return q, err
				}
			}
			fromMember = true
			i++
		case resp.EqualFold(a, "fromlonlat") && left >= 2 && search && !fromMember:
			if q.shape.Lon, q.shape.Lat, err = geoLonLat(opts[i+1], opts[i+2]); err != nil {
				return q, err
			}
			fromLonLat = true
			i += 2
		case resp.EqualFold(a, "byradius") && left >= 2 && search && !byBox:
			if err = geoRadius(&q.shape, opts[i+1:i+3]); err != nil {
				return q, err
			}
			byRadius = true
			i += 2
		case resp.EqualFold(a, "bybox") && left >= 3 && search && !byRadius:
			if err = geoBox(&q.shape, opts[i+1:i+4]); err != nil {
				return q, err
			}
			byBox = true
			i += 3
		default:
			return q, geoErr(commands.ErrSyntax)
		}
	}
	switch {
	case q.store != nil && (q.withDist || q.withHash || q.withCoord):
		what := "STORE option in GEORADIUS"
		if kind&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		return q, geoErr("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
	case search && !fromMember && !fromLonLat:
		return q, geoErr("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(args[0]))
	case search && !byRadius && !byBox:
		return q, geoErr("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(args[0]))
	case q.any && q.count == 0:
		return q, geoErr("ERR the ANY argument requires COUNT argument")
	}
	// COUNT keeps the nearest: it sorts, unless ANY asks for any.
	if q.count != 0 && q.order == geoUnsorted && !q.any {
		q.order = geoAsc
	}
	return q, nil
}

// zsetSource is a sorted set as a search reads it: by cell, a score
// range with its maximum excluded.
type zsetSource struct{ z engine.ZSetReader }

func (s zsetSource) ScoreRange(lo, hi float64, fn func(member []byte, score float64) bool) {
	s.z.ScoreRange(engine.ScoreBound{Value: lo}, engine.ScoreBound{Value: hi, Excl: true}, fn)
}

// run is the search of q in z: the points it returns, in order, the
// count it keeps, with distances in q's unit.
func (q *geoQuery) run(z engine.ZSetReader) []geo.Point {
	limit := 0
	if q.any {
		limit = int(min(q.count, math.MaxInt32))
	}
	points := geo.Search(zsetSource{z}, &q.shape, limit)
	keep := len(points)
	if q.count != 0 && int64(keep) > q.count {
		keep = int(q.count)
	}
	if q.order != geoUnsorted {
		geo.Sort(points, q.order == geoDesc, keep)
	}
	points = points[:keep]
	for i := range points {
		points[i].Dist /= q.shape.Conversion
	}
	return points
}

func cmdGeoRadius(c *commands.Ctx, args [][]byte) { geoSearchCommand(c, args, geoRadiusCoords, 1) }
func cmdGeoRadiusByMember(c *commands.Ctx, args [][]byte) {
	geoSearchCommand(c, args, geoRadiusMember, 1)
}
func cmdGeoRadiusRO(c *commands.Ctx, args [][]byte) {
	geoSearchCommand(c, args, geoRadiusCoords|geoNoStore, 1)
}
func cmdGeoRadiusByMemberRO(c *commands.Ctx, args [][]byte) {
	geoSearchCommand(c, args, geoRadiusMember|geoNoStore, 1)
}
func cmdGeoSearch(c *commands.Ctx, args [][]byte) { geoSearchCommand(c, args, geoSearch, 1) }
func cmdGeoSearchStore(c *commands.Ctx, args [][]byte) {
	geoSearchCommand(c, args, geoSearch|geoSearchStore, 2)
}

// geoSearchCommand is georadiusGeneric: a search of the sorted set at
// args[src], replied or stored.
func geoSearchCommand(c *commands.Ctx, args [][]byte, kind geoKind, src int) {
	// Which key a STORE names is known without the source: the arguments
	// read without it are read the same with it, up to an error.
	if q, err := parseGeoQuery(args, kind, nil); err == nil && q.store != nil {
		geoStore(c, args, kind, src, q.store)
		return
	}
	var q geoQuery
	var points []geo.Point
	var qerr error
	found, err := c.Store.ZRead(args[src], func(z engine.ZSetReader) {
		if q, qerr = parseGeoQuery(args, kind, z.Score); qerr == nil {
			points = q.run(z)
		}
	})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if !found {
		q, qerr = parseGeoQuery(args, kind, nil)
	}
	if qerr != nil {
		c.W.Error(qerr.Error())
		return
	}
	writeGeoPoints(c, &q, points)
}

// geoStore is a search whose results replace dst: the read of the source
// and the write are one operation.
func geoStore(c *commands.Ctx, args [][]byte, kind geoKind, src int, dst []byte) {
	n, changed, err := c.Store.ZStoreFrom(dst, args[src], func(z engine.ZSetReader, found bool, add func([]byte, float64)) error {
		score := z.Score
		if !found {
			score = nil
		}
		q, err := parseGeoQuery(args, kind, score)
		if err != nil || !found {
			return err
		}
		for _, p := range q.run(z) {
			s := p.Score
			if q.storeDist {
				s = p.Dist
			}
			add(p.Member, s)
		}
		return nil
	})
	var qerr geoErr
	switch {
	case errors.As(err, &qerr):
		c.W.Error(string(qerr))
		return
	case err != nil:
		commands.WriteError(c.W, err)
		return
	}
	event := "georadiusstore"
	if kind&geoSearch != 0 {
		event = "geosearchstore"
	}
	notifyStored(c, commands.EventZSet, event, dst, n > 0, changed)
	c.W.Int(int64(n))
}

// writeGeoPoints replies a search's points: members alone, or each with
// what was asked for, always in the order distance, hash, coordinates.
func writeGeoPoints(c *commands.Ctx, q *geoQuery, points []geo.Point) {
	fields := 0
	for _, with := range []bool{q.withDist, q.withHash, q.withCoord} {
		if with {
			fields++
		}
	}
	c.W.Array(len(points))
	for _, p := range points {
		if fields > 0 {
			c.W.Array(fields + 1)
		}
		c.W.Bulk(p.Member)
		if q.withDist {
			writeDistance(c, p.Dist)
		}
		if q.withHash {
			c.W.Int(geo.HashInt(p.Score))
		}
		if q.withCoord {
			c.W.Array(2)
			writeCoordinate(c, p.Lon)
			writeCoordinate(c, p.Lat)
		}
	}
}

// georadiusKeys finds GEORADIUS's and GEORADIUSBYMEMBER's keys as Redis's
// georadiusGetKeys: the source, and the key after the last STORE or
// STOREDIST from the fifth argument on.
func georadiusKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	keys := [][]byte{args[1]}
	var dst []byte
	for i := 5; i < len(args); i++ {
		if (resp.EqualFold(args[i], "store") || resp.EqualFold(args[i], "storedist")) && i+1 < len(args) {
			dst = args[i+1]
			i++
		}
	}
	if dst != nil {
		keys = append(keys, dst)
	}
	return keys
}

// georadiusStoreKey finds the key a GEORADIUS changes: its STORE's, if
// any.
func georadiusStoreKey(args [][]byte) [][]byte {
	if keys := georadiusKeys(args); len(keys) > 1 {
		return keys[1:]
	}
	return nil
}

// geoCommands are the geospatial commands: sorted sets of geohash scores,
// for the family's table (Commands).
func geoCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "geoadd", Arity: -5, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoAdd,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "geo",
			Summary:  "Adds one or more members to a geospatial index. The key is created if it doesn't exist.",
			Usage:    "key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]", Since: "3.2.0"},
		{Name: "geodist", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoDist,
			Group: "geo", Summary: "Returns the distance between two members of a geospatial index.",
			Usage: "key member1 member2 [M|KM|FT|MI]", Since: "3.2.0"},
		{Name: "geohash", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoHash,
			Group: "geo", Summary: "Returns members from a geospatial index as geohash strings.",
			Usage: "key [member [member ...]]", Since: "3.2.0"},
		{Name: "geopos", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoPos,
			Group: "geo", Summary: "Returns the longitude and latitude of members from a geospatial index.",
			Usage: "key [member [member ...]]", Since: "3.2.0"},
		{Name: "georadius", Arity: -6, Flags: commands.Write | commands.DenyOOM | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoRadius, Access: commands.KeysCopy, KeysOf: georadiusKeys,
			KeysWritten: georadiusStoreKey,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRO|commands.KAccess),
				{Flags: commands.KOW | commands.KUpdate, Keyword: "STORE", StartFrom: 6},
				{Flags: commands.KOW | commands.KUpdate, Keyword: "STOREDIST", StartFrom: 6},
			},
			Group: "geo",
			Summary: "Queries a geospatial index for members within a distance from a coordinate, optionally " +
				"stores the result.",
			Usage: "key longitude latitude radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count " +
				"[ANY]] [ASC|DESC] [STORE key] [STOREDIST key]",
			Since: "3.2.0"},
		{Name: "georadiusbymember", Arity: -5, Flags: commands.Write | commands.DenyOOM | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoRadiusByMember, Access: commands.KeysCopy,
			KeysOf: georadiusKeys, KeysWritten: georadiusStoreKey,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRO|commands.KAccess),
				{Flags: commands.KOW | commands.KUpdate, Keyword: "STORE", StartFrom: 5},
				{Flags: commands.KOW | commands.KUpdate, Keyword: "STOREDIST", StartFrom: 5},
			},
			Group: "geo",
			Summary: "Queries a geospatial index for members within a distance from a member, optionally stores " +
				"the result.",
			Usage: "key member radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] " +
				"[ASC|DESC] [STORE key] [STOREDIST key]",
			Since: "3.2.0"},
		{Name: "georadius_ro", Arity: -6, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoRadiusRO,
			Group:   "geo",
			Summary: "Returns members from a geospatial index that are within a distance from a coordinate.",
			Usage: "key longitude latitude radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count " +
				"[ANY]] [ASC|DESC]",
			Since: "3.2.10"},
		{Name: "georadiusbymember_ro", Arity: -5, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoRadiusByMemberRO,
			Group: "geo", Summary: "Returns members from a geospatial index that are within a distance from a member.",
			Usage: "key member radius (M|KM|FT|MI) [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC|DESC]",
			Since: "3.2.10"},
		{Name: "geosearch", Arity: -7, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGeoSearch,
			Group: "geo", Summary: "Queries a geospatial index for members inside an area of a box or a circle.",
			Usage: "key (FROMMEMBER member|FROMLONLAT longitude latitude) (BYRADIUS radius (M|KM|FT|MI)|BYBOX " +
				"width height (M|KM|FT|MI)) [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]",
			Since: "6.2.0"},
		{Name: "geosearchstore", Arity: -8, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdGeoSearchStore, Access: commands.KeysDestFirst,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				commands.KeyAt(2, commands.KRO|commands.KAccess),
			},
			Group: "geo",
			Summary: "Queries a geospatial index for members inside an area of a box or a circle, optionally " +
				"stores the result.",
			Usage: "destination source (FROMMEMBER member|FROMLONLAT longitude latitude) (BYRADIUS radius " +
				"(M|KM|FT|MI)|BYBOX width height (M|KM|FT|MI)) [ASC|DESC] [COUNT count [ANY]] [STOREDIST]",
			Since: "6.2.0"},
	}
}
